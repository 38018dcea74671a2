// Internal to sharder/: the parts of `inspect`'s report that list things —
// the graph's inputs and outputs (its first screen, as Polygraphy's
// `inspect model` starts), the per-node table (`--nodes`, the columns of
// onnx-tool's profile: name, op, FLOPs, %, weights, output shape, IPU) and
// the placement the model carries — as proto (inspect.proto) and as text.
#ifndef AUTOSHARD_SHARDER_INSPECT_TABLES_H_
#define AUTOSHARD_SHARDER_INSPECT_TABLES_H_

#include <string>

#include "proto/inspect.pb.h"
#include "sharder/prepare.h"

namespace autoshard::internal {

// Fills r's inputs and outputs (graph inputs that are not initializers; the
// shapes p.analysis->tensors holds) and nodes (one row per node of
// p.analysis->dag).
void AddTensorsAndNodes(const Prepared& p, proto::InspectReport* r);

// "  input  float32  [1,3,224,224]" lines under "inputs:" and "outputs:".
std::string TensorsText(const proto::InspectReport& r);

}  // namespace autoshard::internal

#endif  // AUTOSHARD_SHARDER_INSPECT_TABLES_H_
