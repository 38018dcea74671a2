// The problem a plan solved, as the runtime must see it (issue 32): the
// graph inputs' planned dims, which `shard --fix-input-shapes` writes into
// the output model (as onnxsim's --overwrite-input-shape does), and the PopRT
// flags that convert the model for the same problem.
#ifndef AUTOSHARD_POD_POPRT_FLAGS_H_
#define AUTOSHARD_POD_POPRT_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "graph/shapes.h"
#include "onnx/onnx_pb.h"
#include "proto/plan.pb.h"

namespace autoshard::pod {

// The main graph's inputs that are not initializers, in graph order, with
// the dims of `tensors` (the planned shapes); a dim unknown there (-1) is 1,
// as the figures count it. An input of unknown rank or no tensor type is
// left out.
std::vector<proto::PlannedInput> PlannedInputs(const onnx::GraphProto& graph,
                                               const TensorInfoMap& tensors);

// "--input_shape a=1,3,224,224 --input_shape b=1 --precision fp16
// --available_memory_proportion 0.6" for PopRT's converter: each planned
// input, then the precision when fp16 (PopRT's default is the model's
// types) and the proportion the plan was made with. Flag names from PopRT's
// CLI as issue 32 quotes them.
std::string PopRtFlags(const std::vector<proto::PlannedInput>& inputs,
                       const std::string& precision, double proportion);

// Sets the dims of each of `inputs` on the same-named input of `graph`
// (a dim_param replaced by its value), as onnxsim's --overwrite-input-shape
// does. InvalidArgument naming the input when the graph has no such input
// or its rank differs.
absl::Status FixInputShapes(const std::vector<proto::PlannedInput>& inputs,
                            onnx::GraphProto* graph);

}  // namespace autoshard::pod

#endif  // AUTOSHARD_POD_POPRT_FLAGS_H_
