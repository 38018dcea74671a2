// FLOPs rules per ONNX op type (DESIGN.md §3.1). FLOPs = 2 x MACs for the
// contraction ops; other ops count output elements times a small per-op
// constant. Shape-only ops cost 0. Every rule states its formula beside it.
#ifndef AUTOSHARD_COSTMODEL_FLOPS_RULES_H_
#define AUTOSHARD_COSTMODEL_FLOPS_RULES_H_

#include <string>
#include <vector>

#include "graph/shapes.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

struct FlopsEstimate {
  double flops = 0;
  double macs = 0;           // MACs of contraction ops, else 0
  bool has_rule = true;      // false: no rule; flops = output elements
  bool shapes_known = true;  // false: a dim the rule needed was unknown (as 1)
  // Op types that fell back to the output-elements rule: this node's own when
  // has_rule is false, and those of the nodes in its If/Loop/Scan bodies.
  // Outside the default domain an op type is written "domain.OpType".
  std::vector<std::string> ops_without_rule;
};

// FLOPs of one node of the main graph. If/Loop/Scan: the costlier branch of
// an If; Loop/Scan body once (trip counts come with a later issue).
FlopsEstimate EstimateFlops(const onnx::NodeProto& node,
                            const TensorInfoMap& tensors);

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_FLOPS_RULES_H_
