// FLOPs rules and op classes per ONNX op type (DESIGN.md §3.1). FLOPs = 2 x
// MACs for the contraction ops; other ops count output elements times a small
// per-op constant. Shape-only ops cost 0. Every rule states its formula beside
// it: contractions in flops_rules_contraction.cc, If/Loop/Scan in
// flops_rules_control.cc, the others and the rule table in flops_rules.cc.
#ifndef AUTOSHARD_COSTMODEL_FLOPS_RULES_H_
#define AUTOSHARD_COSTMODEL_FLOPS_RULES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "graph/shapes.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

// What kind of work an op does, for the tile-memory and performance models
// (DESIGN.md §3.2-3.4: efficiency per op class, temporary memory of
// MatMul/Conv). The rule table in flops_rules.cc gives every op its class;
// an op without a rule is kOther.
enum class OpClass {
  kMatMul,         // MatMul, Gemm, Einsum, MatMulInteger, QLinearMatMul,
                   // com.microsoft FusedMatMul/Attention, RNN/GRU/LSTM
  kConv,           // Conv, ConvTranspose, ConvInteger, QLinearConv
  kElementwise,    // per-element arithmetic, activations, compares, casts,
                   // (de)quantization
  kNormalization,  // Batch/Layer/Instance/Group normalization, Softmax,
                   // LogSoftmax, Hardmax, LRN, com.microsoft *LayerNorm*
  kReduction,      // Reduce*, ArgMax/ArgMin, pooling (global too), TopK,
                   // CumSum, NonZero
  kDataMovement,   // shape-only ops, Constant, Transpose, Concat, Split,
                   // Gather*, Slice, Pad, Tile, Resize, Scatter*, ...
  kControlFlow,    // If, Loop, Scan
  kOther,          // everything else (ops without a rule)
};

// "matmul", "conv", "elementwise", "normalization", "reduction",
// "data_movement", "control_flow" or "other".
std::string_view OpClassName(OpClass op_class);

// The class of `node`'s op type (domain-aware, like the FLOPs rules).
OpClass ClassifyOp(const onnx::NodeProto& node);

// Values of the integer scalar constants of one graph (initializers and
// Constant node outputs of type INT64 or INT32 with one element, whose data
// is stored in the file), by tensor name. A Loop's trip count M is looked up
// here. Bodies are not descended into.
using ScalarConstants = absl::flat_hash_map<std::string, int64_t>;
ScalarConstants CollectScalarConstants(const onnx::GraphProto& graph);

struct FlopsEstimate {
  double flops = 0;
  double macs = 0;           // MACs of contraction ops, else 0
  bool has_rule = true;      // false: no rule; flops = output elements
  bool shapes_known = true;  // false: a dim the rule needed was unknown (as 1)
  OpClass op_class = OpClass::kOther;
  // Op types that fell back to the output-elements rule: this node's own when
  // has_rule is false, and those of the nodes in its If/Loop/Scan bodies.
  // Outside the default domain an op type is written "domain.OpType".
  std::vector<std::string> ops_without_rule;
  // Loop/Scan nodes (this one, or ones nested in its bodies) whose body was
  // costed once because the trip count is not a known constant. A nested
  // node is written as the path of node names from this node down,
  // "outer > inner" (not "/": exporters put "/" in names, e.g. torch's
  // "/decoder/Loop"); a body node without a name is "<op type>#<index in its
  // body>".
  std::vector<std::string> loops_costed_once;
};

// FLOPs of one node of the main graph, whose tensors are `tensors` and whose
// integer scalar constants are `scalars`. If: the costlier branch. Loop: the
// body x M when M is a constant in `scalars` or a body's own tables, from 0 to
// 2^31 - 1 (exporters write INT64_MAX for "until the condition is false");
// with a condition M is an upper bound. Scan (opset 9+): the body x the scan
// axis length of the first scan input when known. Otherwise the body once,
// listed in loops_costed_once. Details: TripCount in flops_rules_control.cc.
FlopsEstimate EstimateFlops(const onnx::NodeProto& node,
                            const TensorInfoMap& tensors,
                            const ScalarConstants& scalars = {});

// "Conv" for default-domain ops, "com.microsoft.Attention" for others: the
// label ops_without_rule and inspect's per-op-type table use.
std::string OpLabel(const onnx::NodeProto& node);

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_FLOPS_RULES_H_
