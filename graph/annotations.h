// The node annotations PopART/PopRT read (DESIGN.md §5): INT attributes
// `__ipu_number` and `__pipeline_stage` on the main graph's nodes. Written by
// `shard`/`apply` (and the compile oracle's candidates), read by `split`.
#ifndef AUTOSHARD_GRAPH_ANNOTATIONS_H_
#define AUTOSHARD_GRAPH_ANNOTATIONS_H_

#include "onnx/onnx_pb.h"

namespace autoshard {

inline constexpr char kIpuAttribute[] = "__ipu_number";
inline constexpr char kStageAttribute[] = "__pipeline_stage";

// Sets (or replaces) the INT attributes `__ipu_number` and `__pipeline_stage`
// on `node`.
void SetPlacement(int ipu, int pipeline_stage, onnx::NodeProto* node);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_ANNOTATIONS_H_
