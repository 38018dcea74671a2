#include "costmodel/flops_rules.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "costmodel/flops_rules_internal.h"
#include "graph/graph.h"

// Note [FLOPs rules]
// FLOPs count 2 per multiply-accumulate (MAC). Names used in the formulas:
// out = elements of output 0, in = elements of input 0, and for contractions
// M x K times K x N. Per-element constants are rough op counts, chosen so that
// a cheap op is 1 and a transcendental function (exp, log, tanh, erf, sqrt,
// pow, sin...) is 4; composite ops add up their parts, stated beside them.
// A dim a rule needs but that is unknown counts as 1 and clears shapes_known.
// The rule table (Rules() below) is the one place that knows every op: its
// entry holds both the FLOPs rule and the OpClass.

namespace autoshard {
namespace internal {

using onnx::AttributeProto;
using onnx::NodeProto;

std::string OpLabel(const NodeProto& node) {
  if (IsDefaultDomain(node.domain())) return node.op_type();
  return absl::StrCat(node.domain(), ".", node.op_type());
}

int NodeShapes::num_inputs() const {
  int n = 0;
  for (const auto& name : node_.input()) n += name.empty() ? 0 : 1;
  return n;
}

double NodeShapes::Dim(const TensorInfo* t, int axis) {
  if (!Knows(t, axis)) {
    known_ = false;
    return 1;
  }
  return static_cast<double>(t->dims[axis < 0 ? axis + Rank(t) : axis]);
}

double NodeShapes::Elements(const TensorInfo* t) {
  if (t == nullptr || !t->IsStatic()) known_ = false;
  return t == nullptr ? 1 : static_cast<double>(t->NumElementsOr1());
}

double NodeShapes::OutElements(bool broadcast) {
  const TensorInfo* y = out(0);
  if (y != nullptr && y->IsStatic()) {
    return static_cast<double>(y->NumElementsOr1());
  }
  known_ = false;
  if (y != nullptr && y->rank_known) {
    return static_cast<double>(y->NumElementsOr1());
  }
  const TensorInfo* x = in(0);
  double n = x != nullptr ? static_cast<double>(x->NumElementsOr1()) : 1;
  for (int i = 1; broadcast && i < node_.input_size(); ++i) {
    const TensorInfo* t = in(i);
    if (t != nullptr) {
      n = std::max(n, static_cast<double>(t->NumElementsOr1()));
    }
  }
  return n;
}

namespace {

constexpr double kTranscendental = 4;

// Sum/Max/Min/Mean of n operands: out x (n - 1) (at least 1); Mean adds one
// division per element.
void VariadicRule(NodeShapes& s, FlopsEstimate* e) {
  const double ops = std::max(1, s.num_inputs() - 1);
  const double mean = s.node().op_type() == "Mean" ? 1 : 0;
  e->flops = s.OutElements(/*broadcast=*/true) * (ops + mean);
}

// MaxPool/AveragePool: out x prod(kernel_shape) (one compare or add per tap;
// AveragePool's final division is not counted). LpPool: 2 per tap.
void PoolRule(NodeShapes& s, FlopsEstimate* e) {
  const std::vector<int64_t> kernel = AttrInts(s.node(), "kernel_shape");
  if (kernel.empty()) s.MarkUnknown();
  double taps = 1;
  for (int64_t k : kernel) taps *= static_cast<double>(k);
  const double per_tap = s.node().op_type() == "LpPool" ? 2 : 1;
  e->flops = s.OutElements() * taps * per_tap;
}

// Number of interpolated axes d of a Resize/GridSample: the axes whose size
// changes from input 0 to output 0 when both shapes are static, else rank - 2.
int InterpolatedAxes(NodeShapes& s, bool spatial_only) {
  const TensorInfo* x = s.in(0);
  const TensorInfo* y = s.out(0);
  if (!spatial_only && x != nullptr && y != nullptr && x->IsStatic() &&
      y->IsStatic() && x->dims.size() == y->dims.size()) {
    int d = 0;
    for (size_t i = 0; i < x->dims.size(); ++i) d += x->dims[i] != y->dims[i];
    return std::max(d, 1);
  }
  return std::max(NodeShapes::Rank(x) - 2, 1);
}

// Interpolation per output element over d axes: nearest 1 (index arithmetic);
// (bi/tri)linear 2 x 2^d (a multiply and an add per tap); cubic 2 x 4^d.
double InterpolationFlops(const std::string& mode, int d) {
  if (mode.find("linear") != std::string::npos) return std::ldexp(2.0, d);
  if (mode.find("cubic") != std::string::npos) return std::ldexp(2.0, 2 * d);
  return 1;
}

// Resize/Upsample (default mode nearest) and GridSample (default bilinear,
// over the rank - 2 spatial axes): out x InterpolationFlops(mode, d).
void ResizeRule(NodeShapes& s, FlopsEstimate* e) {
  const bool grid = s.node().op_type() == "GridSample";
  const std::string mode =
      AttrString(s.node(), "mode", grid ? "bilinear" : "nearest");
  e->flops =
      s.OutElements() * InterpolationFlops(mode, InterpolatedAxes(s, grid));
}

// LRN: out x (2 x size + 3): a square and an add per window tap, then a
// scale, a pow and a division.
void LrnRule(NodeShapes& s, FlopsEstimate* e) {
  e->flops = s.OutElements() *
             (2.0 * static_cast<double>(AttrInt(s.node(), "size", 1)) + 3);
}

// com.microsoft EmbedLayerNormalization: input_ids[B, S] and
// word_embedding[V, H] give the output [B, S, H]; gathers (0), adding the
// word, position and segment embeddings (2) and layer normalization (5):
// flops = 7 x B x S x H.
void EmbedLayerNormRule(NodeShapes& s, FlopsEstimate* e) {
  const TensorInfo* ids = s.in(0);
  e->flops = 7 * s.Dim(ids, 0) * s.Dim(ids, 1) * s.Dim(s.in(2), 1);
}

// How an op is costed: a fixed count per output or input element (plus 1
// when input `plus1_if_input` is present), or a rule function; and its class.
struct FlopsRule {
  enum Kind { kZero, kPerOutputElement, kPerInputElement, kCustom };
  Kind kind = kZero;
  double per_element = 0;
  RuleFn fn = nullptr;
  int plus1_if_input = -1;
  OpClass op_class = OpClass::kOther;
};

FlopsRule Zero() { return {FlopsRule::kZero, 0, nullptr}; }
FlopsRule PerOut(double c, int plus1_if_input = -1) {
  return {FlopsRule::kPerOutputElement, c, nullptr, plus1_if_input};
}
FlopsRule PerIn(double c) { return {FlopsRule::kPerInputElement, c, nullptr}; }
FlopsRule Custom(RuleFn fn) { return {FlopsRule::kCustom, 0, fn}; }

using RuleTable = absl::flat_hash_map<std::string, FlopsRule>;

// Gives every op of the space-separated list `ops` the class `op_class` and
// the FLOPs rule `rule`.
void Set(RuleTable* t, absl::string_view ops, OpClass op_class,
         FlopsRule rule) {
  rule.op_class = op_class;
  for (absl::string_view op : absl::StrSplit(ops, ' ', absl::SkipEmpty())) {
    (*t)[std::string(op)] = rule;
  }
}

// kMatMul and kConv: the contractions (flops_rules_contraction.cc).
void AddContractionRules(RuleTable* t) {
  using enum OpClass;
  Set(t, "MatMul MatMulInteger QLinearMatMul com.microsoft.FusedMatMul",
      kMatMul, Custom(MatMulRule));
  Set(t, "Gemm", kMatMul, Custom(GemmRule));
  Set(t, "Einsum", kMatMul, Custom(EinsumRule));
  Set(t, "RNN GRU LSTM", kMatMul, Custom(internal::RecurrentRule));
  Set(t, "com.microsoft.Attention", kMatMul, Custom(internal::AttentionRule));
  Set(t, "Conv ConvInteger QLinearConv ConvTranspose", kConv, Custom(ConvRule));
}

// kElementwise: per output (or input) element.
void AddElementwiseRules(RuleTable* t) {
  using enum OpClass;
  // 1 per output element: arithmetic, comparison, logic, casts.
  Set(t,
      "Add Sub Mul Div Neg Abs Relu Sign Ceil Floor Round Mod "
      "Reciprocal Equal Less Greater LessOrEqual GreaterOrEqual Not "
      "And Or Xor Where Cast CastLike IsNaN IsInf BitShift "
      "BitwiseAnd BitwiseOr BitwiseXor BitwiseNot ThresholdedRelu",
      kElementwise, PerOut(1));
  // 2 per element: a compare and a multiply (LeakyRelu, PRelu, Shrink), min
  // and max (Clip), subtract and scale (DequantizeLinear).
  Set(t, "LeakyRelu PRelu Shrink Clip DequantizeLinear", kElementwise,
      PerOut(2));
  // Transcendental functions: 4 per element.
  Set(t,
      "Exp Log Sqrt Pow Tanh Erf Sin Cos Tan Asin Acos Atan Sinh "
      "Cosh Asinh Acosh Atanh",
      kElementwise, PerOut(kTranscendental));
  Set(t, "Sigmoid", kElementwise, PerOut(kTranscendental));  // 1/(1+exp(-x))
  Set(t, "HardSigmoid", kElementwise, PerOut(3));     // max(0, min(1, a x + b))
  Set(t, "HardSwish", kElementwise, PerOut(4));       // x HardSigmoid(x)
  Set(t, "QuantizeLinear", kElementwise, PerOut(3));  // divide, round, clamp
  Set(t, "Softsign", kElementwise, PerOut(3));        // x / (1 + |x|)
  Set(t, "Elu", kElementwise, PerOut(kTranscendental + 2));  // a (exp(x)-1)
  Set(t, "Celu Selu", kElementwise, PerOut(kTranscendental + 3));
  // Softplus: log(exp(x) + 1).
  Set(t, "Softplus", kElementwise, PerOut(2 * kTranscendental + 1));
  // Gelu: x/2 (1 + erf(x / sqrt 2)).
  Set(t, "Gelu", kElementwise, PerOut(kTranscendental + 4));
  // Mish: x tanh(softplus(x)).
  Set(t, "Mish", kElementwise, PerOut(3 * kTranscendental + 2));
  Set(t, "Sum Max Min Mean", kElementwise, Custom(VariadicRule));
  // DynamicQuantizeLinear: min and max over the input, then quantize (3):
  // ~5 per input element.
  Set(t, "DynamicQuantizeLinear", kElementwise, PerIn(5));
  // FastGelu/BiasGelu: Gelu (8) after the bias add (1 if input 1).
  Set(t, "com.microsoft.FastGelu com.microsoft.BiasGelu", kElementwise,
      PerOut(kTranscendental + 4, 1));
  // QuickGelu: x sigmoid(a x).
  Set(t, "com.microsoft.QuickGelu", kElementwise, PerOut(kTranscendental + 2));
}

// kNormalization: batch, layer and softmax normalizations.
void AddNormalizationRules(RuleTable* t) {
  using enum OpClass;
  // BatchNormalization (inference): a scale and a shift per element once
  // mean, variance, scale and bias are folded: 2 x out.
  Set(t, "BatchNormalization", kNormalization, PerOut(2));
  // Normalizations over an axis: ~5 per input element (mean, subtract,
  // square and sum, scale by 1/std, affine).
  Set(t,
      "InstanceNormalization LayerNormalization GroupNormalization "
      "MeanVarianceNormalization LpNormalization "
      "com.microsoft.SimplifiedLayerNormalization",
      kNormalization, PerIn(5));
  // Softmax/LogSoftmax: ~5 per input element (max, subtract, exp as 1,
  // sum, divide). Hardmax: 1 (argmax).
  Set(t, "Softmax LogSoftmax", kNormalization, PerIn(5));
  Set(t, "Hardmax", kNormalization, PerIn(1));
  Set(t, "LRN", kNormalization, Custom(LrnRule));
  // SkipLayerNormalization: the skip add (1), the bias add (1 if input 4),
  // layer normalization (5).
  Set(t,
      "com.microsoft.SkipLayerNormalization "
      "com.microsoft.SkipSimplifiedLayerNormalization",
      kNormalization, PerOut(6, 4));
  Set(t, "com.microsoft.EmbedLayerNormalization", kNormalization,
      Custom(EmbedLayerNormRule));
}

// kReduction. Reductions and scans: 1 per input element. TopK: one
// compare per input element (the partial sort's extra work is not
// modelled). NonZero: one test per element. Global pooling: 1 per input
// element. Windowed pooling: PoolRule.
void AddReductionRules(RuleTable* t) {
  using enum OpClass;
  Set(t,
      "ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 "
      "ReduceL2 ReduceLogSum ReduceLogSumExp ReduceSumSquare ArgMax "
      "ArgMin CumSum TopK NonZero GlobalAveragePool GlobalMaxPool "
      "GlobalLpPool",
      kReduction, PerIn(1));
  Set(t, "MaxPool AveragePool LpPool", kReduction, Custom(PoolRule));
}

// kDataMovement: shapes, copies and gathers.
void AddDataMovementRules(RuleTable* t) {
  using enum OpClass;
  // Shape-only ops and constants: 0 FLOPs.
  Set(t,
      "Shape Size Reshape Squeeze Unsqueeze Flatten Identity "
      "Constant ConstantOfShape Range Expand EyeLike Optional "
      "OptionalGetElement OptionalHasElement",
      kDataMovement, Zero());
  // Copies without arithmetic: 0 FLOPs. Dropout: 0 (inference).
  Set(t,
      "Transpose Concat Split Gather GatherElements GatherND Slice "
      "Pad Tile DepthToSpace SpaceToDepth Scatter ScatterND "
      "ScatterElements Compress ReverseSequence OneHot Trilu "
      "MaxUnpool Dropout SequenceEmpty SequenceConstruct "
      "SequenceInsert SequenceAt SequenceErase SequenceLength "
      "ConcatFromSequence SplitToSequence",
      kDataMovement, Zero());
  // Interpolation: mostly gathers on the device, so data movement, but
  // with the arithmetic of ResizeRule.
  Set(t, "Resize Upsample GridSample", kDataMovement, Custom(ResizeRule));
}

// kControlFlow (flops_rules_control.cc).
void AddControlFlowRules(RuleTable* t) {
  using enum OpClass;
  Set(t, "If Loop Scan", kControlFlow, Custom(ControlFlowRule));
}

// The rule table, by class. com.microsoft contrib ops (onnxruntime) are keyed
// "com.microsoft.OpType"; others of that domain use the default domain's
// entry of the same name, if any.
const RuleTable& Rules() {
  static const RuleTable* const kRules = [] {
    auto* t = new RuleTable;
    AddContractionRules(t);
    AddElementwiseRules(t);
    AddNormalizationRules(t);
    AddReductionRules(t);
    AddDataMovementRules(t);
    AddControlFlowRules(t);
    return t;
  }();
  return *kRules;
}

const FlopsRule* FindRule(const NodeProto& node) {
  const RuleTable& rules = Rules();
  if (node.domain() == "ai.onnx.ml") {
    // Classical-ML ops (scalers, encoders, linear models, imputers, ZipMap):
    // 1 FLOP per input element, a simple documented rule; they are tiny next
    // to a network's layers. Class "other".
    static const FlopsRule kMlRule = PerIn(1);
    return &kMlRule;
  }
  if (node.domain() == "com.microsoft") {
    auto it = rules.find(OpLabel(node));
    if (it != rules.end()) return &it->second;
  } else if (!IsDefaultDomain(node.domain())) {
    return nullptr;
  }
  // Default-domain ops, and com.microsoft ops named like one.
  auto it = rules.find(node.op_type());
  return it == rules.end() ? nullptr : &it->second;
}

}  // namespace

FlopsEstimate EstimateNode(const NodeProto& node, const Scope& scope,
                           std::string label) {
  FlopsEstimate e;
  NodeShapes s(node, scope, std::move(label));
  const FlopsRule* rule = FindRule(node);
  if (rule == nullptr) {
    // No rule: output elements (all outputs).
    e.has_rule = false;
    e.ops_without_rule.push_back(OpLabel(node));
    for (int i = 0; i < node.output_size(); ++i) {
      if (!node.output(i).empty()) e.flops += s.Elements(s.out(i));
    }
  } else {
    e.op_class = rule->op_class;
    switch (rule->kind) {
      case FlopsRule::kZero:
        break;
      case FlopsRule::kPerOutputElement:
        e.flops =
            s.OutElements(/*broadcast=*/true) *
            (rule->per_element + (s.has_input(rule->plus1_if_input) ? 1 : 0));
        break;
      case FlopsRule::kPerInputElement:
        e.flops = rule->per_element * s.Elements(s.in(0));
        break;
      case FlopsRule::kCustom:
        rule->fn(s, &e);
        break;
    }
  }
  e.shapes_known = e.shapes_known && s.known();
  return e;
}

}  // namespace internal

std::string_view OpClassName(OpClass op_class) {
  switch (op_class) {
    case OpClass::kMatMul:
      return "matmul";
    case OpClass::kConv:
      return "conv";
    case OpClass::kElementwise:
      return "elementwise";
    case OpClass::kNormalization:
      return "normalization";
    case OpClass::kReduction:
      return "reduction";
    case OpClass::kDataMovement:
      return "data_movement";
    case OpClass::kControlFlow:
      return "control_flow";
    case OpClass::kOther:
      break;
  }
  return "other";
}

OpClass ClassifyOp(const onnx::NodeProto& node) {
  const internal::FlopsRule* rule = internal::FindRule(node);
  return rule != nullptr ? rule->op_class : OpClass::kOther;
}

FlopsEstimate EstimateFlops(const onnx::NodeProto& node,
                            const TensorInfoMap& tensors,
                            const ScalarConstants& scalars) {
  const internal::Scope scope(tensors, scalars);
  return internal::EstimateNode(
      node, scope, node.name().empty() ? node.op_type() : node.name());
}

std::string OpLabel(const onnx::NodeProto& node) {
  return internal::OpLabel(node);
}

}  // namespace autoshard
