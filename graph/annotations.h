// The node annotations PopART/PopRT read (DESIGN.md §5): INT attributes
// `__ipu_number` and `__pipeline_stage` on the main graph's nodes. Written by
// `shard`/`apply` (and the compile oracle's candidates), read by `split`.
#ifndef AUTOSHARD_GRAPH_ANNOTATIONS_H_
#define AUTOSHARD_GRAPH_ANNOTATIONS_H_

#include <string>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

inline constexpr char kIpuAttribute[] = "__ipu_number";
inline constexpr char kStageAttribute[] = "__pipeline_stage";

// Sets (or replaces) the INT attributes `__ipu_number` and `__pipeline_stage`
// on `node`.
void SetPlacement(int ipu, int pipeline_stage, onnx::NodeProto* node);

// "'name' (Op)", or "#index (Op)" for a node without a name (`index`: its
// position in the graph).
std::string NodeLabel(const onnx::NodeProto& node, int index);

// The value of `node`'s INT attribute `attribute` (kIpuAttribute or
// kStageAttribute); -1 when absent. InvalidArgument naming the node (by
// NodeLabel) for another attribute type or a value outside 0..2^31-1.
absl::StatusOr<int> PlacementAttr(const onnx::NodeProto& node, int index,
                                  const char* attribute);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_ANNOTATIONS_H_
