#include "costmodel/flops_rules.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

// Note [FLOPs rules]
// FLOPs count 2 per multiply-accumulate (MAC). Names used in the formulas:
// out = elements of output 0, in = elements of input 0, and for contractions
// M x K times K x N. Per-element constants are rough op counts, chosen so that
// a cheap op is 1 and a transcendental function (exp, log, tanh, erf, sqrt,
// pow, sin...) is 4; composite ops add up their parts, stated beside them.
// A dim a rule needs but that is unknown counts as 1 and clears shapes_known.

namespace autoshard {
namespace {

using onnx::AttributeProto;
using onnx::NodeProto;

constexpr double kTranscendental = 4;

const AttributeProto* FindAttr(const NodeProto& node, std::string_view name) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

int64_t AttrInt(const NodeProto& node, std::string_view name, int64_t dflt) {
  const AttributeProto* attr = FindAttr(node, name);
  return attr != nullptr ? attr->i() : dflt;
}

std::vector<int64_t> AttrInts(const NodeProto& node, std::string_view name) {
  const AttributeProto* attr = FindAttr(node, name);
  if (attr == nullptr) return {};
  return {attr->ints().begin(), attr->ints().end()};
}

std::string AttrString(const NodeProto& node, std::string_view name,
                       std::string_view dflt) {
  const AttributeProto* attr = FindAttr(node, name);
  return attr != nullptr ? attr->s() : std::string(dflt);
}

bool IsDefaultDomain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

std::string OpLabel(const NodeProto& node) {
  if (IsDefaultDomain(node.domain())) return node.op_type();
  return absl::StrCat(node.domain(), ".", node.op_type());
}

// The tensor infos of one node's inputs and outputs. Every accessor that
// needs a dim it does not know returns 1 for it and records the fact.
class NodeShapes {
 public:
  NodeShapes(const NodeProto& node, const TensorInfoMap& tensors)
      : node_(node), tensors_(tensors) {}

  const NodeProto& node() const { return node_; }
  const TensorInfoMap& tensors() const { return tensors_; }
  bool known() const { return known_; }
  void MarkUnknown() { known_ = false; }

  bool has_input(int i) const {
    return i >= 0 && i < node_.input_size() && !node_.input(i).empty();
  }
  int num_inputs() const {
    int n = 0;
    for (const auto& name : node_.input()) n += name.empty() ? 0 : 1;
    return n;
  }
  const TensorInfo* in(int i) const {
    return has_input(i) ? Find(node_.input(i)) : nullptr;
  }
  const TensorInfo* out(int i) const {
    if (i >= node_.output_size() || node_.output(i).empty()) return nullptr;
    return Find(node_.output(i));
  }

  // Rank of `t`, or -1 when unknown (not recorded: callers decide).
  static int Rank(const TensorInfo* t) {
    return t != nullptr && t->rank_known ? static_cast<int>(t->dims.size())
                                         : -1;
  }
  static bool Knows(const TensorInfo* t, int axis) {
    const int rank = Rank(t);
    if (axis < 0) axis += rank;
    return rank >= 0 && axis >= 0 && axis < rank && t->dims[axis] >= 0;
  }

  // Dim `axis` of `t` (negative counts from the end).
  double Dim(const TensorInfo* t, int axis) {
    if (!Knows(t, axis)) {
      known_ = false;
      return 1;
    }
    return static_cast<double>(t->dims[axis < 0 ? axis + Rank(t) : axis]);
  }
  // Dim `axis` of `t`, else dim `alt_axis` of `alt`.
  double DimOr(const TensorInfo* t, int axis, const TensorInfo* alt,
               int alt_axis) {
    return Knows(t, axis) ? Dim(t, axis) : Dim(alt, alt_axis);
  }
  // Elements of `t`.
  double Elements(const TensorInfo* t) {
    if (t == nullptr || !t->IsStatic()) known_ = false;
    return t == nullptr ? 1 : static_cast<double>(t->NumElementsOr1());
  }
  // Elements of output 0 (unknown dims as 1). When even its rank is unknown:
  // for a broadcasting elementwise op the largest input's element count,
  // else input 0's (the data input of most ops; never a weight's).
  double OutElements(bool broadcast = false) {
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

 private:
  const TensorInfo* Find(const std::string& name) const {
    auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : &it->second;
  }

  const NodeProto& node_;
  const TensorInfoMap& tensors_;
  bool known_ = true;
};

using RuleFn = void (*)(NodeShapes& s, FlopsEstimate* e);

// How an op is costed: a fixed count per output or input element (plus 1
// when input `plus1_if_input` is present), or a rule function.
struct OpRule {
  enum Kind { kZero, kPerOutputElement, kPerInputElement, kCustom };
  Kind kind = kZero;
  double per_element = 0;
  RuleFn fn = nullptr;
  int plus1_if_input = -1;
};

void SetMacs(double macs, double extra_flops, FlopsEstimate* e) {
  e->macs = macs;
  e->flops = 2 * macs + extra_flops;
}

// --- Contractions -----------------------------------------------------------

// MatMul a[..., M, K] x b[..., K, N]: macs = out x K, where out = batch x M x
// N with batch the numpy-broadcast batch dims of a and b (taken from the
// output shape when it is static). MatMulInteger alike; QLinearMatMul has b
// at input 3 (a, a_scale, a_zp, b, ...); com.microsoft FusedMatMul computes
// alpha op(a) op(b) with the transA/transB attributes (alpha not counted).
void MatMulRule(NodeShapes& s, FlopsEstimate* e) {
  const bool trans_a = AttrInt(s.node(), "transA", 0) != 0;
  const bool trans_b = AttrInt(s.node(), "transB", 0) != 0;
  const TensorInfo* a = s.in(0);
  const TensorInfo* b = s.in(s.node().op_type() == "QLinearMatMul" ? 3 : 1);
  const int ra = NodeShapes::Rank(a), rb = NodeShapes::Rank(b);
  const double k = s.DimOr(a, ra == 1 ? 0 : (trans_a ? -2 : -1), b,
                           rb == 1 ? 0 : (trans_b ? -1 : -2));
  double out = 1;
  const TensorInfo* y = s.out(0);
  if (y != nullptr && y->IsStatic()) {
    out = static_cast<double>(y->NumElementsOr1());
  } else if (ra < 0 || rb < 0) {
    out = s.OutElements();  // records the unknown shape
  } else {
    out = (ra >= 2 ? s.Dim(a, trans_a ? -1 : -2) : 1) *
          (rb >= 2 ? s.Dim(b, trans_b ? -2 : -1) : 1);
    for (int i = 3; i <= std::max(ra, rb); ++i) {  // batch dims, from the end
      const double da = ra >= i ? s.Dim(a, -i) : 1;
      const double db = rb >= i ? s.Dim(b, -i) : 1;
      out *= std::max(da, db);
    }
  }
  SetMacs(out * k, 0, e);
}

// Gemm: Y = alpha op(A) op(B) + beta C with op(A) M x K and op(B) K x N.
// macs = M x N x K; flops = 2 x macs (+ M x N for adding C). The alpha and
// beta scalings are not counted.
void GemmRule(NodeShapes& s, FlopsEstimate* e) {
  const bool ta = AttrInt(s.node(), "transA", 0) != 0;
  const bool tb = AttrInt(s.node(), "transB", 0) != 0;
  const TensorInfo* a = s.in(0);
  const TensorInfo* b = s.in(1);
  const TensorInfo* y = s.out(0);
  const double m = s.DimOr(y, 0, a, ta ? 1 : 0);
  const double n = s.DimOr(y, 1, b, tb ? 0 : 1);
  const double k = s.DimOr(a, ta ? 0 : 1, b, tb ? 1 : 0);
  SetMacs(m * n * k, s.has_input(2) ? m * n : 0, e);
}

// Conv X[N, Cin, in...] * W[Cout, Cin/group, kernel...] -> Y[N, Cout, out...]:
//   macs = N x Cout x prod(out) x (Cin/group) x prod(kernel)
//        = elements(Y) x prod(W dims 1..).
// ConvTranspose X[N, Cin, in...] * W[Cin, Cout/group, kernel...]:
//   macs = N x Cin x prod(in) x (Cout/group) x prod(kernel)
//        = elements(X) x prod(W dims 1..).
// flops = 2 x macs (+ elements(Y) with a bias). When W's rank is unknown,
// prod(W dims 1..) = channels / group x prod(kernel_shape), channels being
// X's Cin (Conv) or Y's Cout (ConvTranspose). ConvInteger (x, w, x_zp, w_zp)
// and QLinearConv (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B) are
// Conv; their zero points and requantization are not counted.
void ConvRule(NodeShapes& s, FlopsEstimate* e) {
  const std::string& op = s.node().op_type();
  const bool transposed = op == "ConvTranspose";
  const int bias_idx = op == "QLinearConv" ? 8 : (op == "ConvInteger" ? -1 : 2);
  const TensorInfo* w = s.in(op == "QLinearConv" ? 3 : 1);
  const int rw = NodeShapes::Rank(w);
  double macs_per_position = 1;
  if (rw >= 3) {
    for (int i = 1; i < rw; ++i) macs_per_position *= s.Dim(w, i);
  } else {
    const std::vector<int64_t> kernel = AttrInts(s.node(), "kernel_shape");
    if (kernel.empty()) s.MarkUnknown();
    const double group = std::max<int64_t>(1, AttrInt(s.node(), "group", 1));
    macs_per_position = s.Dim(transposed ? s.out(0) : s.in(0), 1) / group;
    for (int64_t k : kernel) macs_per_position *= static_cast<double>(k);
  }
  const double out = s.OutElements();
  const double positions = transposed ? s.Elements(s.in(0)) : out;
  SetMacs(positions * macs_per_position, s.has_input(bias_idx) ? out : 0, e);
}

// Einsum: with two or more operands, macs = elements(output) x product of the
// sizes of the contracted letters (those absent from the output), flops =
// 2 x macs. One operand (transpose, trace, sum): flops = elements(input).
// An equation this parser cannot read falls back to the no-rule cost.
bool EinsumCost(NodeShapes& s, FlopsEstimate* e) {
  const std::string eq =
      absl::StrReplaceAll(AttrString(s.node(), "equation", ""), {{" ", ""}});
  const size_t arrow = eq.find("->");
  const std::vector<std::string> terms =
      absl::StrSplit(eq.substr(0, arrow), ',');
  if (arrow == 0 || static_cast<int>(terms.size()) != s.node().input_size()) {
    return false;
  }
  if (terms.size() == 1) {
    e->flops = s.Elements(s.in(0));
    return true;
  }
  absl::flat_hash_map<char, double> size;
  absl::flat_hash_map<char, int> count;
  for (int t = 0; t < static_cast<int>(terms.size()); ++t) {
    const std::string& term = terms[t];
    const size_t dots = term.find("...");
    const std::string head = term.substr(0, dots);
    const std::string tail =
        dots == std::string::npos ? "" : term.substr(dots + 3);
    const TensorInfo* info = s.in(t);
    for (int i = 0; i < static_cast<int>(head.size()); ++i) {
      size[head[i]] = std::max(size[head[i]], s.Dim(info, i));
      ++count[head[i]];
    }
    for (int i = 0; i < static_cast<int>(tail.size()); ++i) {
      const int axis = i - static_cast<int>(tail.size());
      size[tail[i]] = std::max(size[tail[i]], s.Dim(info, axis));
      ++count[tail[i]];
    }
  }
  double contracted = 1;
  for (const auto& [letter, n] : count) {
    if (letter == '.') return false;  // malformed ellipsis
    // Explicit output: letters it lacks. Implicit: letters seen twice or more.
    const bool summed = arrow != std::string::npos
                            ? eq.find(letter, arrow + 2) == std::string::npos
                            : n > 1;
    if (summed) contracted *= size[letter];
  }
  SetMacs(s.OutElements() * contracted, 0, e);
  return true;
}

void EinsumRule(NodeShapes& s, FlopsEstimate* e) {
  if (!EinsumCost(s, e)) {
    e->has_rule = false;
    e->flops = s.OutElements();
    e->macs = 0;
    e->ops_without_rule.push_back(OpLabel(s.node()));
  }
}

// --- Other rules ------------------------------------------------------------

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

// RNN/GRU/LSTM over X[seq, batch, input] (layout 1: [batch, seq, input]) with
// g gates (RNN 1, GRU 3, LSTM 4) and hidden size H per direction:
//   macs = seq x dirs x batch x g x H x (input + H)   (X W^T and H R^T)
//   flops = 2 x macs + seq x dirs x batch x H x c, with c the elementwise work
//   per hidden unit and step: 7 per gate (two bias adds, one sum, a
//   transcendental activation) plus the state update: LSTM 4 x 7 + 8
//   (cell 3, tanh 4, output 1) = 36; GRU 3 x 7 + 5 (reset 1, blend 4) = 26;
//   RNN 7.
void RecurrentRule(NodeShapes& s, FlopsEstimate* e) {
  const std::string& op = s.node().op_type();
  const int gates = op == "LSTM" ? 4 : (op == "GRU" ? 3 : 1);
  const double per_unit = op == "LSTM" ? 36 : (op == "GRU" ? 26 : 7);
  const bool batch_first = AttrInt(s.node(), "layout", 0) != 0;
  const TensorInfo* x = s.in(0);
  const TensorInfo* w = s.in(1);  // [dirs, g x H, input]
  const double seq = s.Dim(x, batch_first ? 1 : 0);
  const double batch = s.Dim(x, batch_first ? 0 : 1);
  const double input = s.DimOr(x, 2, w, 2);
  const double dirs =
      AttrString(s.node(), "direction", "forward") == "bidirectional" ? 2 : 1;
  const int64_t hidden_attr = AttrInt(s.node(), "hidden_size", 0);
  double hidden = static_cast<double>(hidden_attr);
  if (hidden_attr <= 0) {  // R is [dirs, g x H, H]; W is [dirs, g x H, input]
    hidden =
        NodeShapes::Knows(s.in(2), 2) ? s.Dim(s.in(2), 2) : s.Dim(w, 1) / gates;
  }
  const double steps = seq * dirs * batch;
  SetMacs(steps * gates * hidden * (input + hidden), steps * hidden * per_unit,
          e);
}

// com.microsoft Attention: input[B, S, Hin], weights[Hin, Hq + Hk + Hv],
// optional past[2, B, heads, P, Hk/heads]; T = P + S.
//   macs = B x S x Hin x (Hq+Hk+Hv)   (QKV projection)
//        + B x S x T x Hq             (Q K^T, all heads)
//        + B x S x T x Hv             (softmax(.) V)
//   flops = 2 x macs + 5 x B x heads x S x T (softmax) + B x S x (Hq+Hk+Hv)
//   (bias).
void AttentionRule(NodeShapes& s, FlopsEstimate* e) {
  const TensorInfo* x = s.in(0);
  const TensorInfo* w = s.in(1);
  const double batch = s.Dim(x, 0), seq = s.Dim(x, 1);
  const double hidden_in = s.DimOr(x, 2, w, 0);
  const double qkv = s.Dim(w, 1);
  const std::vector<int64_t> sizes = AttrInts(s.node(), "qkv_hidden_sizes");
  const double hq = sizes.size() == 3 ? static_cast<double>(sizes[0]) : qkv / 3;
  const double hv = sizes.size() == 3 ? static_cast<double>(sizes[2]) : qkv / 3;
  const double heads = std::max<int64_t>(1, AttrInt(s.node(), "num_heads", 1));
  const double total = seq + (s.has_input(4) ? s.Dim(s.in(4), 3) : 0);
  const double macs = batch * seq * (hidden_in * qkv + total * hq + total * hv);
  SetMacs(macs, 5 * batch * heads * seq * total + batch * seq * qkv, e);
}

// com.microsoft EmbedLayerNormalization: input_ids[B, S] and
// word_embedding[V, H] give the output [B, S, H]; gathers (0), adding the
// word, position and segment embeddings (2) and layer normalization (5):
// flops = 7 x B x S x H.
void EmbedLayerNormRule(NodeShapes& s, FlopsEstimate* e) {
  const TensorInfo* ids = s.in(0);
  e->flops = 7 * s.Dim(ids, 0) * s.Dim(ids, 1) * s.Dim(s.in(2), 1);
}

FlopsEstimate EstimateBody(const onnx::GraphProto& body,
                           const TensorInfoMap& outer) {
  // Names the body defines shadow the outer scope's.
  TensorInfoMap merged = outer;
  for (auto& [name, info] : CollectTensorInfo(body)) merged[name] = info;
  FlopsEstimate total;
  for (const NodeProto& node : body.node()) {
    FlopsEstimate e = EstimateFlops(node, merged);
    total.flops += e.flops;
    total.macs += e.macs;
    total.shapes_known = total.shapes_known && e.shapes_known;
    total.ops_without_rule.insert(total.ops_without_rule.end(),
                                  e.ops_without_rule.begin(),
                                  e.ops_without_rule.end());
  }
  return total;
}

// If: the costlier branch (sum of its nodes' FLOPs); both branches' unknown
// shapes and ops without a rule are reported. Loop/Scan: the body once (trip
// counts come with a later issue).
void ControlFlowRule(NodeShapes& s, FlopsEstimate* e) {
  bool first = true;
  for (const AttributeProto& attr : s.node().attribute()) {
    if (attr.type() != AttributeProto::GRAPH || !attr.has_g()) continue;
    FlopsEstimate body = EstimateBody(attr.g(), s.tensors());
    if (first || body.flops > e->flops) {
      e->flops = body.flops;
      e->macs = body.macs;
    }
    first = false;
    if (!body.shapes_known) s.MarkUnknown();
    e->ops_without_rule.insert(e->ops_without_rule.end(),
                               body.ops_without_rule.begin(),
                               body.ops_without_rule.end());
  }
}

using RuleTable = absl::flat_hash_map<std::string, OpRule>;

// Gives every op of the space-separated list `ops` the rule `rule`.
void Set(RuleTable* t, absl::string_view ops, OpRule rule) {
  for (absl::string_view op : absl::StrSplit(ops, ' ', absl::SkipEmpty())) {
    (*t)[std::string(op)] = rule;
  }
}

OpRule Zero() { return {OpRule::kZero, 0, nullptr}; }
OpRule PerOut(double c, int plus1_if_input = -1) {
  return {OpRule::kPerOutputElement, c, nullptr, plus1_if_input};
}
OpRule PerIn(double c) { return {OpRule::kPerInputElement, c, nullptr}; }
OpRule Custom(RuleFn fn) { return {OpRule::kCustom, 0, fn}; }

const RuleTable& Rules() {
  static const RuleTable* const kRules = [] {
    auto* t = new RuleTable;
    // Shape-only ops and constants: 0 FLOPs.
    Set(t,
        "Shape Size Reshape Squeeze Unsqueeze Flatten Identity "
        "Constant ConstantOfShape Range Expand EyeLike Optional "
        "OptionalGetElement OptionalHasElement",
        Zero());
    // Data movement: 0 FLOPs (copies, no arithmetic). Dropout: 0 (inference).
    Set(t,
        "Transpose Concat Split Gather GatherElements GatherND Slice "
        "Pad Tile DepthToSpace SpaceToDepth Scatter ScatterND "
        "ScatterElements Compress ReverseSequence OneHot Trilu "
        "MaxUnpool Dropout SequenceEmpty SequenceConstruct "
        "SequenceInsert SequenceAt SequenceErase SequenceLength "
        "ConcatFromSequence SplitToSequence",
        Zero());
    // Elementwise, 1 per output element: arithmetic, comparison, logic, casts.
    Set(t,
        "Add Sub Mul Div Neg Abs Relu Sign Ceil Floor Round Mod "
        "Reciprocal Equal Less Greater LessOrEqual GreaterOrEqual Not "
        "And Or Xor Where Cast CastLike IsNaN IsInf BitShift "
        "BitwiseAnd BitwiseOr BitwiseXor BitwiseNot ThresholdedRelu",
        PerOut(1));
    // Elementwise, 2 per element: a compare and a multiply (LeakyRelu, PRelu,
    // Shrink), min and max (Clip), subtract and scale (DequantizeLinear).
    Set(t, "LeakyRelu PRelu Shrink Clip DequantizeLinear", PerOut(2));
    // Transcendental functions: 4 per element.
    Set(t,
        "Exp Log Sqrt Pow Tanh Erf Sin Cos Tan Asin Acos Atan Sinh "
        "Cosh Asinh Acosh Atanh",
        PerOut(kTranscendental));
    (*t)["Sigmoid"] = PerOut(kTranscendental);  // 1 / (1 + exp(-x))
    (*t)["HardSigmoid"] = PerOut(3);            // max(0, min(1, a x + b))
    (*t)["HardSwish"] = PerOut(4);              // x HardSigmoid(x)
    (*t)["QuantizeLinear"] = PerOut(3);         // divide, round, add, clamp
    (*t)["Softsign"] = PerOut(3);               // x / (1 + |x|)
    (*t)["Elu"] = PerOut(kTranscendental + 2);  // a (exp(x) - 1) for x < 0
    (*t)["Celu"] = PerOut(kTranscendental + 3);
    (*t)["Selu"] = PerOut(kTranscendental + 3);
    (*t)["Softplus"] = PerOut(2 * kTranscendental + 1);  // log(exp(x) + 1)
    (*t)["Gelu"] = PerOut(kTranscendental + 4);  // x/2 (1 + erf(x / sqrt 2))
    (*t)["Mish"] = PerOut(3 * kTranscendental + 2);  // x tanh(softplus(x))
    Set(t, "Sum Max Min Mean", Custom(VariadicRule));
    // BatchNormalization (inference): a scale and a shift per element once
    // mean, variance, scale and bias are folded: 2 x out.
    (*t)["BatchNormalization"] = PerOut(2);
    // Normalizations over an axis: ~5 per input element (mean, subtract,
    // square and sum, scale by 1/std, affine).
    Set(t,
        "InstanceNormalization LayerNormalization GroupNormalization "
        "MeanVarianceNormalization LpNormalization",
        PerIn(5));
    // Softmax/LogSoftmax: ~5 per input element (max, subtract, exp as 1,
    // sum, divide). Hardmax: 1 (argmax).
    (*t)["Softmax"] = PerIn(5);
    (*t)["LogSoftmax"] = PerIn(5);
    (*t)["Hardmax"] = PerIn(1);
    // Reductions and scans: 1 per input element. TopK: one compare per input
    // element (the partial sort's extra work is not modelled). NonZero: one
    // test per element. Global pooling: 1 per input element.
    Set(t,
        "ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 "
        "ReduceL2 ReduceLogSum ReduceLogSumExp ReduceSumSquare ArgMax "
        "ArgMin CumSum TopK NonZero GlobalAveragePool GlobalMaxPool "
        "GlobalLpPool",
        PerIn(1));
    // DynamicQuantizeLinear: min and max over the input, then quantize (3):
    // ~5 per input element.
    (*t)["DynamicQuantizeLinear"] = PerIn(5);
    Set(t, "MaxPool AveragePool LpPool", Custom(PoolRule));
    Set(t, "Resize Upsample GridSample", Custom(ResizeRule));
    (*t)["LRN"] = Custom(LrnRule);
    Set(t, "MatMul MatMulInteger QLinearMatMul", Custom(MatMulRule));
    (*t)["Gemm"] = Custom(GemmRule);
    Set(t, "Conv ConvInteger QLinearConv ConvTranspose", Custom(ConvRule));
    (*t)["Einsum"] = Custom(EinsumRule);
    Set(t, "RNN GRU LSTM", Custom(RecurrentRule));
    Set(t, "If Loop Scan", Custom(ControlFlowRule));
    // com.microsoft contrib ops (onnxruntime). Others of that domain use the
    // default domain's rule of the same name, if any.
    (*t)["com.microsoft.FusedMatMul"] = Custom(MatMulRule);
    (*t)["com.microsoft.Attention"] = Custom(AttentionRule);
    // SkipLayerNormalization: the skip add (1), the bias add (1 if input 4),
    // layer normalization (5).
    (*t)["com.microsoft.SkipLayerNormalization"] = PerOut(6, 4);
    (*t)["com.microsoft.SkipSimplifiedLayerNormalization"] = PerOut(6, 4);
    (*t)["com.microsoft.SimplifiedLayerNormalization"] = PerIn(5);
    (*t)["com.microsoft.EmbedLayerNormalization"] = Custom(EmbedLayerNormRule);
    // FastGelu/BiasGelu: Gelu (8) after the bias add (1 if input 1).
    (*t)["com.microsoft.FastGelu"] = PerOut(kTranscendental + 4, 1);
    (*t)["com.microsoft.BiasGelu"] = PerOut(kTranscendental + 4, 1);
    (*t)["com.microsoft.QuickGelu"] = PerOut(kTranscendental + 2);  // x sig(ax)
    return t;
  }();
  return *kRules;
}

const OpRule* FindRule(const NodeProto& node) {
  const RuleTable& rules = Rules();
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

FlopsEstimate EstimateFlops(const onnx::NodeProto& node,
                            const TensorInfoMap& tensors) {
  FlopsEstimate e;
  NodeShapes s(node, tensors);
  const OpRule* rule = FindRule(node);
  if (rule == nullptr) {
    // No rule: output elements (all outputs).
    e.has_rule = false;
    e.ops_without_rule.push_back(OpLabel(node));
    for (int i = 0; i < node.output_size(); ++i) {
      if (!node.output(i).empty()) e.flops += s.Elements(s.out(i));
    }
  } else {
    switch (rule->kind) {
      case OpRule::kZero:
        break;
      case OpRule::kPerOutputElement:
        e.flops =
            s.OutElements(/*broadcast=*/true) *
            (rule->per_element + (s.has_input(rule->plus1_if_input) ? 1 : 0));
        break;
      case OpRule::kPerInputElement:
        e.flops = rule->per_element * s.Elements(s.in(0));
        break;
      case OpRule::kCustom:
        rule->fn(s, &e);
        break;
    }
  }
  e.shapes_known = e.shapes_known && s.known();
  return e;
}

}  // namespace autoshard
