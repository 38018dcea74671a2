// FLOPs rules of the contraction ops (DESIGN.md §3.1): MatMul, Gemm, Conv,
// Einsum, the recurrent ops and com.microsoft Attention. FLOPs = 2 x MACs,
// plus the bias adds and other arithmetic each rule states.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "costmodel/flops_rules_internal.h"

namespace autoshard::internal {

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

namespace {

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

}  // namespace

void EinsumRule(NodeShapes& s, FlopsEstimate* e) {
  if (!EinsumCost(s, e)) {
    e->has_rule = false;
    e->flops = s.OutElements();
    e->macs = 0;
    e->ops_without_rule.push_back(OpLabel(s.node()));
  }
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

}  // namespace autoshard::internal
