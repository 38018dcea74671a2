// Which graph inputs have a batch axis (issue 25, point 3).
//
// A model's samples per step are the batch axis's size, and not every first
// dim is one: torchvision's detection exports take one image `image[3,h,w]`
// and add the batch axis inside the graph (`Unsqueeze(axes=[0])` after the
// normalization), so their first dim is the image's channels. Such an input
// is one sample per run, and `--batch-size` cannot be applied to it.
#ifndef AUTOSHARD_GRAPH_BATCH_AXIS_H_
#define AUTOSHARD_GRAPH_BATCH_AXIS_H_

#include <map>
#include <string>

#include "onnx/onnx_pb.h"

namespace autoshard {

// The main-graph inputs to which the graph adds a leading axis, each with
// the node that adds it: an Unsqueeze whose axes hold 0 (or -(rank + 1)),
// reached from the input through at most 8 ops that keep the rank of their
// data and take only constants besides it (Sub, Div, Mul, Add, Cast,
// Identity, and the like: a normalization). Their first dim is not a batch.
// Axes are read from the attribute (opset < 13) or a constant input.
std::map<std::string, std::string> InputsWithoutBatchAxis(
    const onnx::GraphProto& graph);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_BATCH_AXIS_H_
