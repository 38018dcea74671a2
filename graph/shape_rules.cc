#include "graph/shape_rules.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph.h"
#include "graph/op_rules.h"
#include "graph/op_rules_internal.h"

namespace autoshard {

namespace {

using onnx::TensorProto;

int64_t AttrInt(const onnx::NodeProto& node, std::string_view name,
                int64_t dflt) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == name) return attr.i();
  }
  return dflt;
}

std::vector<int64_t> AttrInts(const onnx::NodeProto& node,
                              std::string_view name) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == name) return {attr.ints().begin(), attr.ints().end()};
  }
  return {};
}

// A derived output of `elem_type` and `dims` (-1 = unknown), all exact.
DerivedOutput Exact(int32_t elem_type, std::vector<int64_t> dims) {
  DerivedOutput out;
  out.info.elem_type = elem_type;
  out.info.rank_known = true;
  out.info.dims = std::move(dims);
  out.bounds.assign(out.info.dims.size(), "");
  return out;
}

// Dim `axis` (negative from the end) of `t`, or -1.
int64_t Dim(const TensorInfo* t, int axis) {
  if (t == nullptr || !t->rank_known) return -1;
  const int rank = static_cast<int>(t->dims.size());
  if (axis < 0) axis += rank;
  return axis >= 0 && axis < rank ? t->dims[axis] : -1;
}

// The single integer of value `v`, or `dflt`.
int64_t ScalarOr(const ShapeValue* v, int64_t dflt) {
  if (v == nullptr || v->is_float() || v->NumElements() != 1) return dflt;
  return v->ints[0];
}

// --- Data-dependent dims (Note [Data-dependent dims]). ---

// The product of `dims`, or -1 when one is unknown or the product exceeds
// int64 (no bound then).
int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  }
  return n;
}

// The axis attribute of `node` made non-negative for `rank`: false when it
// is out of range; `*has_axis` false (and `*axis` 0) when it is absent.
bool OptionalAxis(const onnx::NodeProto& node, int64_t rank, bool* has_axis,
                  int64_t* axis) {
  *has_axis = false;
  *axis = 0;
  for (const auto& attr : node.attribute()) {
    if (attr.name() == "axis") *has_axis = true, *axis = attr.i();
  }
  if (*axis < 0) *axis += rank;
  return !*has_axis || (*axis >= 0 && *axis < rank);
}

// A data-dependent dim whose bound the graph does not imply: 1, reported as
// an assumption with `reason` (what is unknown).
constexpr int64_t kNoBound = 1;
std::string NoBound(const std::string& unknown) {
  return absl::StrCat(unknown, " unknown: 1 assumed");
}

}  // namespace

namespace rules {

std::vector<DerivedOutput> NonZeroShape(const RuleNode& n) {
  const TensorInfo* x = n.in(0);
  if (x == nullptr || !x->rank_known) return {};
  const int64_t elements = Product(x->dims);
  DerivedOutput out =
      Exact(TensorProto::INT64, {static_cast<int64_t>(x->dims.size()),
                                 elements >= 0 ? elements : kNoBound});
  out.bounds[1] = elements >= 0 ? absl::StrCat("at most the input's ", elements,
                                               " elements")
                                : NoBound("the input's element count");
  return {out};
}

std::vector<DerivedOutput> NmsShape(const RuleNode& n) {
  const TensorInfo* boxes_info = n.in(0);
  const TensorInfo* scores_info = n.in(1);
  if (boxes_info == nullptr || scores_info == nullptr ||
      !boxes_info->rank_known || !scores_info->rank_known) {
    return {};
  }
  if (n.node.input_size() < 3 || n.node.input(2).empty()) {
    return {Exact(TensorProto::INT64, {0, 3})};  // spec: default 0 boxes
  }
  const int64_t batch = Dim(boxes_info, 0);
  const int64_t boxes = Dim(boxes_info, 1);
  const int64_t classes = Dim(scores_info, 1);
  const int64_t max_per_class = ScalarOr(n.value(2), -1);
  int64_t per_class = boxes;
  if (max_per_class >= 0) {
    per_class = boxes < 0 ? max_per_class : std::min(max_per_class, boxes);
  }
  int64_t bound = -1;
  if (batch >= 0 && classes >= 0 && per_class >= 0 &&
      (__builtin_mul_overflow(batch, classes, &bound) ||
       __builtin_mul_overflow(bound, per_class, &bound))) {
    bound = -1;  // beyond int64: no bound
  }
  DerivedOutput out =
      Exact(TensorProto::INT64, {bound >= 0 ? bound : kNoBound, 3});
  if (bound < 0) {
    out.bounds[0] = NoBound("the batch, classes or boxes count");
  } else if (max_per_class < 0) {
    out.bounds[0] =
        absl::StrCat("at most batch ", batch, " x classes ", classes, " x ",
                     boxes, " boxes (max_output_boxes_per_class unknown)");
  } else if (boxes < 0) {
    out.bounds[0] = absl::StrCat("at most batch ", batch, " x classes ",
                                 classes, " x max_output_boxes_per_class ",
                                 max_per_class, " (boxes unknown)");
  } else {
    out.bounds[0] = absl::StrCat("at most batch ", batch, " x classes ",
                                 classes, " x min(max_output_boxes_per_class ",
                                 max_per_class, ", boxes ", boxes, ")");
  }
  return {out};
}

std::vector<DerivedOutput> TopKShape(const RuleNode& n) {
  const TensorInfo* x = n.in(0);
  if (x == nullptr || !x->rank_known) return {};
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  int64_t axis = AttrInt(n.node, "axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return {};
  std::vector<int64_t> dims = x->dims;  // other dims: as known
  const int64_t k = ScalarOr(n.value(1), -1);
  const int64_t d = dims[axis];
  std::string bound;
  if (k >= 0) {
    dims[axis] = d >= 0 ? std::min(k, d) : k;  // exact
  } else if (d >= 0) {
    bound = absl::StrCat("k unknown: at most the axis' ", d);
  } else {
    dims[axis] = kNoBound;
    bound = NoBound("k and the axis' length");
  }
  DerivedOutput values = Exact(x->elem_type, dims);
  DerivedOutput indices = Exact(TensorProto::INT64, dims);
  values.bounds[axis] = indices.bounds[axis] = bound;
  return {values, indices};
}

std::vector<DerivedOutput> UniqueShape(const RuleNode& n) {
  const TensorInfo* x = n.in(0);
  if (x == nullptr || !x->rank_known) return {};
  bool has_axis = false;
  int64_t axis = 0;
  if (!OptionalAxis(n.node, static_cast<int64_t>(x->dims.size()), &has_axis,
                    &axis)) {
    return {};
  }
  // Elements (slices with `axis`) of the input: exact for inverse_indices,
  // the bound of the unique count.
  const int64_t total = has_axis ? x->dims[axis] : Product(x->dims);
  const int64_t count = total >= 0 ? total : kNoBound;
  const std::string bound =
      total >= 0 ? absl::StrCat("at most the input's ", total,
                                has_axis ? " slices" : " elements")
                 : NoBound(has_axis ? "the input's dim on the axis"
                                    : "the input's element count");
  std::vector<int64_t> y_dims = {count};
  int64_t y_axis = 0;
  if (has_axis) {
    y_dims = x->dims;
    y_dims[axis] = count;
    y_axis = axis;
  }
  DerivedOutput y = Exact(x->elem_type, y_dims);
  y.bounds[y_axis] = bound;
  DerivedOutput indices = Exact(TensorProto::INT64, {count});
  indices.bounds[0] = bound;
  DerivedOutput counts = indices;
  return {y, indices, Exact(TensorProto::INT64, {total}), counts};
}

std::vector<DerivedOutput> CompressShape(const RuleNode& n) {
  const TensorInfo* x = n.in(0);
  if (x == nullptr || !x->rank_known) return {};
  const int64_t len = Dim(n.in(1), 0);  // -1: unknown
  bool has_axis = false;
  int64_t axis = 0;
  if (!OptionalAxis(n.node, static_cast<int64_t>(x->dims.size()), &has_axis,
                    &axis)) {
    return {};
  }
  // The input's elements (its dim on the axis), -1 when unknown.
  const int64_t in = has_axis ? x->dims[axis] : Product(x->dims);
  std::vector<int64_t> dims = {-1};
  int64_t at = 0;
  if (has_axis) {
    dims = x->dims;
    at = axis;
  }
  std::string bound;
  if (len >= 0 && in >= 0) {
    dims[at] = std::min(len, in);
    bound = absl::StrCat("at most ", dims[at],
                         " (the condition's length and the input's)");
  } else if (len >= 0 || in >= 0) {
    dims[at] = len >= 0 ? len : in;
    bound =
        absl::StrCat("at most ", dims[at],
                     len >= 0 ? " (the condition's length)" : " (the input's)");
  } else {
    dims[at] = kNoBound;
    bound = NoBound("the condition's length and the input's");
  }
  DerivedOutput out = Exact(x->elem_type, dims);
  out.bounds[at] = bound;
  return {out};
}

// --- Broadcasting element-wise ops whose ONNX 1.12 schema has a function
// body but no inference function (GreaterOrEqual, LessOrEqual), and any
// other the earlier steps left unknown. ---

namespace {

// Where the output's element type comes from.
enum class BroadcastElem { kInput0, kBool, kInput1 };

std::vector<DerivedOutput> Broadcast(const RuleNode& n, BroadcastElem elem) {
  // The inputs the element type comes from must exist (a malformed `Add()`).
  if (n.node.input_size() < (elem == BroadcastElem::kInput1 ? 2 : 1)) return {};
  std::vector<int64_t> dims;
  for (int i = 0; i < n.node.input_size(); ++i) {
    const TensorInfo* t = n.in(i);
    if (t == nullptr || !t->rank_known) return {};
    const size_t rank = std::max(dims.size(), t->dims.size());
    std::vector<int64_t> out(rank);
    for (size_t d = 0; d < rank; ++d) {
      const int64_t a =
          d < rank - dims.size() ? 1 : dims[d - (rank - dims.size())];
      const int64_t b =
          d < rank - t->dims.size() ? 1 : t->dims[d - (rank - t->dims.size())];
      if (a < 0 || b < 0) {
        out[d] = a == 1 ? b : (b == 1 ? a : -1);
      } else {
        if (a != b && a != 1 && b != 1) return {};
        out[d] = a == 1 ? b : a;
      }
    }
    dims = std::move(out);
  }
  int32_t type = n.in(0)->elem_type;
  if (elem == BroadcastElem::kInput1) type = n.in(1)->elem_type;
  if (elem == BroadcastElem::kBool) type = TensorProto::BOOL;
  return {Exact(type, dims)};
}

}  // namespace

std::vector<DerivedOutput> BroadcastShape(const RuleNode& n) {
  return Broadcast(n, BroadcastElem::kInput0);
}
std::vector<DerivedOutput> CompareShape(const RuleNode& n) {
  return Broadcast(n, BroadcastElem::kBool);
}
std::vector<DerivedOutput> WhereShape(const RuleNode& n) {
  return Broadcast(n, BroadcastElem::kInput1);
}

// --- com.microsoft contrib ops (onnxruntime's contrib-op spec). ---

namespace {

// Output 0 (and `also` outputs) shaped as input 0.
std::vector<DerivedOutput> LikeInput0(const RuleNode& n,
                                      std::vector<int> also = {}) {
  const TensorInfo* x = n.in(0);
  if (x == nullptr || !x->rank_known) return {};
  std::vector<DerivedOutput> outs(n.node.output_size());
  outs[0] = Exact(x->elem_type, x->dims);
  for (int i : also) {
    if (i >= 0 && i < n.node.output_size()) outs[i] = outs[0];
  }
  return outs;
}

// (Skip)(Simplified)LayerNormalization: output 0 like the input; the mean
// and inverse-std outputs keep the leading dims and have 1 from `axis` on
// (contrib: axis -1).
std::vector<DerivedOutput> LayerNormRule(const RuleNode& n, int sum_output) {
  std::vector<DerivedOutput> outs = LikeInput0(n, {sum_output});
  if (outs.empty()) return outs;
  const std::vector<int64_t>& dims = outs[0].info.dims;
  const int rank = static_cast<int>(dims.size());
  int axis = static_cast<int>(AttrInt(n.node, "axis", -1));
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return outs;
  std::vector<int64_t> stat(dims.begin(), dims.begin() + axis);
  stat.resize(rank, 1);
  for (int i = 1; i < n.node.output_size() && i < 3; ++i) {
    if (i != sum_output) outs[i] = Exact(TensorProto::FLOAT, stat);
  }
  return outs;
}

}  // namespace

std::vector<DerivedOutput> LikeInput0Shape(const RuleNode& n) {
  return LikeInput0(n);
}
std::vector<DerivedOutput> SkipLayerNormShape(const RuleNode& n) {
  return LayerNormRule(n, 3);
}
std::vector<DerivedOutput> LayerNormShape(const RuleNode& n) {
  return LayerNormRule(n, -1);
}

std::vector<DerivedOutput> EmbedLayerNormShape(const RuleNode& n) {
  const int64_t batch = Dim(n.in(0), 0);
  const int64_t seq = Dim(n.in(0), 1);
  const int64_t hidden = Dim(n.in(2), 1);
  const int32_t type = n.in(2) != nullptr ? n.in(2)->elem_type : 0;
  std::vector<DerivedOutput> outs(n.node.output_size());
  outs[0] = Exact(type, {batch, seq, hidden});
  if (outs.size() > 1) outs[1] = Exact(TensorProto::INT32, {batch});
  if (outs.size() > 2) outs[2] = outs[0];
  return outs;
}

std::vector<DerivedOutput> AttentionShape(const RuleNode& n) {
  const TensorInfo* x = n.in(0);
  if (x == nullptr || !x->rank_known || x->dims.size() != 3) return {};
  const int64_t batch = x->dims[0], seq = x->dims[1];
  const int64_t heads = AttrInt(n.node, "num_heads", 0);
  const std::vector<int64_t> qkv = AttrInts(n.node, "qkv_hidden_sizes");
  int64_t v_hidden = -1, k_hidden = -1;
  if (qkv.size() == 3) {
    k_hidden = qkv[1];
    v_hidden = qkv[2];
  } else if (Dim(n.in(1), 1) >= 0) {
    k_hidden = v_hidden = Dim(n.in(1), 1) / 3;
  }
  std::vector<DerivedOutput> outs(n.node.output_size());
  outs[0] = Exact(x->elem_type, {batch, seq, v_hidden});
  if (outs.size() > 1 && heads > 0 && k_hidden >= 0) {
    const TensorInfo* past = n.in(4);
    int64_t total = seq;
    if (past != nullptr) {
      const int64_t p = Dim(past, 3);
      if (p < 0 || seq < 0 || __builtin_add_overflow(p, seq, &total)) {
        total = -1;
      }
    }
    outs[1] = Exact(x->elem_type, {2, batch, heads, total, k_hidden / heads});
  }
  return outs;
}

std::vector<DerivedOutput> FusedMatMulShape(const RuleNode& n) {
  const TensorInfo* a = n.in(0);
  const TensorInfo* b = n.in(1);
  if (a == nullptr || b == nullptr || !a->rank_known || !b->rank_known ||
      a->dims.size() < 2 || b->dims.size() < 2) {
    return {};
  }
  std::vector<int64_t> ad = a->dims, bd = b->dims;
  if (AttrInt(n.node, "transA", 0) != 0)
    std::swap(ad[ad.size() - 1], ad[ad.size() - 2]);
  if (AttrInt(n.node, "transB", 0) != 0)
    std::swap(bd[bd.size() - 1], bd[bd.size() - 2]);
  // Batch dims broadcast (numpy); unknown dims stay unknown.
  const size_t batch_rank = std::max(ad.size(), bd.size()) - 2;
  std::vector<int64_t> dims(batch_rank, -1);
  for (size_t i = 0; i < batch_rank; ++i) {
    const size_t from_end =
        batch_rank - i;  // position before the 2 matrix dims
    const int64_t da =
        from_end <= ad.size() - 2 ? ad[ad.size() - 2 - from_end] : 1;
    const int64_t db =
        from_end <= bd.size() - 2 ? bd[bd.size() - 2 - from_end] : 1;
    dims[i] = da == 1 ? db : (db == 1 ? da : (da == db ? da : -1));
  }
  dims.push_back(ad[ad.size() - 2]);
  dims.push_back(bd[bd.size() - 1]);
  return {Exact(a->elem_type, dims)};
}

// --- ai.onnx.ml ops (the ONNX-ML operator spec; ONNX 1.12 has no inference
// for them). ---

namespace {

int64_t AttrCount(const onnx::NodeProto& node, std::string_view name) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == name) {
      return std::max(
          {attr.ints_size(), attr.floats_size(), attr.strings_size()});
    }
  }
  return -1;
}

// Input 0 when its rank is known, else null.
const TensorInfo* RankedInput0(const RuleNode& n) {
  const TensorInfo* x = n.in(0);
  return x != nullptr && x->rank_known ? x : nullptr;
}

// Samples: dim 0 of a [N, C] input; a [C] input is one sample.
int64_t Samples(const TensorInfo& x) {
  return x.dims.size() >= 2 ? x.dims[0] : 1;
}

}  // namespace

std::vector<DerivedOutput> FloatLikeInput0Shape(const RuleNode& n) {
  const TensorInfo* x = RankedInput0(n);
  if (x == nullptr) return {};
  return {Exact(TensorProto::FLOAT, x->dims)};
}

std::vector<DerivedOutput> OneHotEncoderShape(const RuleNode& n) {
  const TensorInfo* x = RankedInput0(n);
  if (x == nullptr) return {};
  int64_t cats = AttrCount(n.node, "cats_int64s");
  if (cats < 0) cats = AttrCount(n.node, "cats_strings");
  std::vector<int64_t> dims = x->dims;
  dims.push_back(cats);
  return {Exact(TensorProto::FLOAT, dims)};
}

std::vector<DerivedOutput> LinearClassifierShape(const RuleNode& n) {
  const TensorInfo* x = RankedInput0(n);
  if (x == nullptr) return {};
  const int64_t batch = Samples(*x);
  const bool ints = AttrCount(n.node, "classlabels_ints") >= 0;
  int64_t classes = AttrCount(n.node, "classlabels_ints");
  if (classes < 0) classes = AttrCount(n.node, "classlabels_strings");
  return {Exact(ints ? TensorProto::INT64 : TensorProto::STRING, {batch}),
          Exact(TensorProto::FLOAT, {batch, classes})};
}

std::vector<DerivedOutput> LinearRegressorShape(const RuleNode& n) {
  const TensorInfo* x = RankedInput0(n);
  if (x == nullptr) return {};
  return {
      Exact(TensorProto::FLOAT, {Samples(*x), AttrInt(n.node, "targets", 1)})};
}

std::vector<DerivedOutput> FeatureVectorizerShape(const RuleNode& n) {
  const TensorInfo* x = RankedInput0(n);
  if (x == nullptr) return {};
  int64_t total = 0;
  for (int64_t d : AttrInts(n.node, "inputdimensions")) {
    if (total < 0) break;
    if (d < 0 || __builtin_add_overflow(total, d, &total)) total = -1;
  }
  return {Exact(TensorProto::FLOAT, {Samples(*x), total})};
}

}  // namespace rules

namespace {

bool InDomain(const std::string& domain, RuleDomain rule) {
  switch (rule) {
    case RuleDomain::kOnnx:
      return IsDefaultDomain(domain);
    case RuleDomain::kMicrosoft:
      return domain == "com.microsoft";
    case RuleDomain::kMl:
      return domain == "ai.onnx.ml";
  }
  return false;
}

}  // namespace

std::vector<DerivedOutput> DeriveOutputShapes(const RuleNode& n) {
  std::vector<DerivedOutput> outs;
  if (n.node.output_size() == 0) return outs;  // rules write outs[0]
  const OpRule* rule = FindOpRule(n.node.op_type());
  if (rule != nullptr && rule->shape != nullptr &&
      InDomain(n.node.domain(), rule->domain)) {
    outs = rule->shape(n);
  }
  outs.resize(n.node.output_size());
  return outs;
}

}  // namespace autoshard
