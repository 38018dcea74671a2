// Dims the options make that an op of the model cannot take (issue 25, point
// 2): `--batch-size 4` on IS-Net joins a Resize's constant-size batch of 1 to
// a batch-4 branch at a Concat; an Expand to a constant [2,16] gets [4,16];
// a Conv gets 2 channels where its weight has 3. onnxruntime refuses such a
// model; autoshard refuses it too, naming the node, instead of planning a
// model that does not exist.
//
// Note [One check where dims meet]: the judge is ONNX's own shape inference,
// run once in error mode on the model at the options' dims (every node's
// rule, not one rule per op here), its node errors of the dim-conflict kind
// (dims that cannot be merged, broadcast, multiplied, squeezed or split)
// kept only where the same node raises no such error at the model's declared
// dims: those the options caused. ONNX 1.12 does not compare a Conv's input
// channels with its weight's, so that one rule is added here. A model ONNX
// cannot infer for another reason gets no verdict (planning goes on with
// the warnings it has).
#ifndef AUTOSHARD_GRAPH_DIM_CONFLICTS_H_
#define AUTOSHARD_GRAPH_DIM_CONFLICTS_H_

#include <string>

#include "absl/status/status.h"
#include "google/protobuf/repeated_field.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

using GraphInputs = google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>;

// `model`: the main graph with its inputs at the options' dims (it passed
// CheckModelForOnnx); `declared`: its inputs as the file declares them;
// `cause`: the options that made the dims, as typed ("--batch-size 4").
// Copies `model` twice at most (value_info and the outputs' dims left out,
// inputs as given) and infers each, counting them in
// ThreadStepCounts().onnx_inferences; the second only when the first finds
// a conflict. Errors: InvalidArgument in one line, "CAUSE: node 'NAME' (OP)
// cannot take the dims it makes: its inputs 'a' [1,64,512,512] and 'b'
// [4,64,512,512]; REASON" (REASON: ONNX's message, or the Conv rule's).
absl::Status CheckOptionDims(const onnx::ModelProto& model,
                             const GraphInputs& declared,
                             const std::string& cause);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_DIM_CONFLICTS_H_
