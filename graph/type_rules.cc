// The fallback type rules of graph/tensor_types.h (ApplyTypeRules): element
// type and rank where ONNX's inference and the shape rules
// (graph/shape_rules.h) leave a tensor unknown.
#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "graph/node_attributes.h"
#include "graph/op_rules.h"
#include "graph/op_rules_internal.h"
#include "graph/tensor_types.h"

namespace autoshard {
namespace {

using T = onnx::TensorProto;

// Constant int tensors longer than this are not read (axes are short).
constexpr int kMaxConstantInts = 64;

// The values of an int32/int64 tensor stored in the file, if short.
std::optional<std::vector<int64_t>> TensorInts(const onnx::TensorProto& t) {
  if (t.data_location() == T::EXTERNAL) return std::nullopt;
  std::vector<int64_t> v;
  if (t.data_type() == T::INT64) {
    if (t.int64_data_size() > 0) {
      v.assign(t.int64_data().begin(), t.int64_data().end());
    } else {
      const size_t n = t.raw_data().size() / sizeof(int64_t);
      v.resize(n);
      if (n > 0) std::memcpy(v.data(), t.raw_data().data(), n * 8);
    }
  } else if (t.data_type() == T::INT32) {
    if (t.int32_data_size() > 0) {
      v.assign(t.int32_data().begin(), t.int32_data().end());
    } else {
      const size_t n = t.raw_data().size() / sizeof(int32_t);
      std::vector<int32_t> w(n);
      if (n > 0) std::memcpy(w.data(), t.raw_data().data(), n * 4);
      v.assign(w.begin(), w.end());
    }
  } else {
    return std::nullopt;
  }
  if (v.size() > kMaxConstantInts) return std::nullopt;
  return v;
}

onnx::TypeProto TensorType(const ElemRank& er) {
  onnx::TypeProto type;
  auto* tt = type.mutable_tensor_type();
  if (er.elem != 0) tt->set_elem_type(er.elem);
  if (er.rank >= 0) {
    auto* shape = tt->mutable_shape();
    for (int i = 0; i < er.rank; ++i) shape->add_dim();
  }
  return type;
}

}  // namespace

namespace {

// Every output of `node` typed `er`.
std::vector<ElemRank> All(const onnx::NodeProto& node, ElemRank er) {
  return std::vector<ElemRank>(node.output_size(), er);
}
// Rank r + k; unknown (-1) stays unknown.
int RankPlus(int r, int k) { return r < 0 ? -1 : r + k; }

// The broadcast of the inputs' ranks (the largest; unknown if one is).
int BroadcastRank(const TypeQuery& q, const onnx::NodeProto& node) {
  int rank = 0;
  for (int i = 0; i < node.input_size(); ++i) {
    const int r = q.In(node, i).rank;
    rank = r < 0 || rank < 0 ? -1 : std::max(rank, r);
  }
  return rank;
}

// MatMul's output rank from its inputs 0 and `b`.
int MatMulRank(const TypeQuery& q, const onnx::NodeProto& node, int b) {
  const int ra = q.In(node, 0).rank, rb = q.In(node, b).rank;
  if (ra < 1 || rb < 1) return -1;
  return ra == 1 && rb == 1 ? 0
         : ra == 1          ? rb - 1
         : rb == 1          ? ra - 1
                            : std::max(ra, rb);
}

}  // namespace

namespace rules {

// --- Unary and broadcasting elementwise ops, casts, predicates. ---

// Output 0 of the type and rank of input 0 (MaxPool's indices,
// LayerNormalization's statistics: other outputs unknown).
std::vector<ElemRank> SameAsInput0Types(const TypeQuery& q,
                                        const onnx::NodeProto& node) {
  std::vector<ElemRank> out(node.output_size());
  if (!out.empty()) out[0] = q.In(node, 0);
  return out;
}
// Output 0 and the sum (output 3) as input 0.
std::vector<ElemRank> SkipLayerNormTypes(const TypeQuery& q,
                                         const onnx::NodeProto& node) {
  std::vector<ElemRank> out = SameAsInput0Types(q, node);
  if (out.size() > 3) out[3] = out[0];
  return out;
}
// Output 0 as input 0, the mask bool of its rank.
std::vector<ElemRank> DropoutTypes(const TypeQuery& q,
                                   const onnx::NodeProto& node) {
  std::vector<ElemRank> out = SameAsInput0Types(q, node);
  if (out.size() > 1) out[1] = {T::BOOL, out[0].rank};
  return out;
}
std::vector<ElemRank> BroadcastTypes(const TypeQuery& q,
                                     const onnx::NodeProto& node) {
  return All(node, {q.In(node, 0).elem, BroadcastRank(q, node)});
}
std::vector<ElemRank> CompareTypes(const TypeQuery& q,
                                   const onnx::NodeProto& node) {
  return All(node, {T::BOOL, BroadcastRank(q, node)});
}
std::vector<ElemRank> WhereTypes(const TypeQuery& q,
                                 const onnx::NodeProto& node) {
  return All(node, {q.In(node, 1).elem, BroadcastRank(q, node)});
}
std::vector<ElemRank> CastTypes(const TypeQuery& q,
                                const onnx::NodeProto& node) {
  return All(node, {(int32_t)AttrInt(node, "to", 0), q.In(node, 0).rank});
}
std::vector<ElemRank> CastLikeTypes(const TypeQuery& q,
                                    const onnx::NodeProto& node) {
  return All(node, {q.In(node, 1).elem, q.In(node, 0).rank});
}
std::vector<ElemRank> PredicateTypes(const TypeQuery& q,
                                     const onnx::NodeProto& node) {
  return All(node, {T::BOOL, q.In(node, 0).rank});
}

// --- MatMul and the quantized ops. ---

std::vector<ElemRank> MatMulTypes(const TypeQuery& q,
                                  const onnx::NodeProto& node) {
  return All(node, {q.In(node, 0).elem, MatMulRank(q, node, 1)});
}
std::vector<ElemRank> MatMulIntegerTypes(const TypeQuery& q,
                                         const onnx::NodeProto& node) {
  return All(node, {T::INT32, MatMulRank(q, node, 1)});
}
std::vector<ElemRank> QLinearMatMulTypes(const TypeQuery& q,
                                         const onnx::NodeProto& node) {
  return All(node, {q.In(node, 7).elem, MatMulRank(q, node, 3)});
}
std::vector<ElemRank> ConvIntegerTypes(const TypeQuery& q,
                                       const onnx::NodeProto& node) {
  return All(node, {T::INT32, q.In(node, 0).rank});
}
std::vector<ElemRank> QLinearConvTypes(const TypeQuery& q,
                                       const onnx::NodeProto& node) {
  return All(node, {q.In(node, 7).elem, q.In(node, 0).rank});
}
std::vector<ElemRank> DequantizeLinearTypes(const TypeQuery& q,
                                            const onnx::NodeProto& node) {
  return All(node, {q.In(node, 1).elem, q.In(node, 0).rank});
}
std::vector<ElemRank> QuantizeLinearTypes(const TypeQuery& q,
                                          const onnx::NodeProto& node) {
  const int32_t zp = q.In(node, 2).elem;
  return All(node, {zp != 0 ? zp : T::UINT8, q.In(node, 0).rank});
}
std::vector<ElemRank> DynamicQuantizeLinearTypes(const TypeQuery& q,
                                                 const onnx::NodeProto& node) {
  return {{T::UINT8, q.In(node, 0).rank}, {T::FLOAT, 0}, {T::UINT8, 0}};
}

// --- Ops that make, reshape, join or split tensors. ---

std::vector<ElemRank> ShapeTypes(const TypeQuery& q,
                                 const onnx::NodeProto& node) {
  return All(node, {T::INT64, 1});
}
std::vector<ElemRank> SizeTypes(const TypeQuery& q,
                                const onnx::NodeProto& node) {
  return All(node, {T::INT64, 0});
}
std::vector<ElemRank> IndicesTypes(const TypeQuery& q,
                                   const onnx::NodeProto& node) {
  return All(node, {T::INT64, 2});
}
std::vector<ElemRank> RangeTypes(const TypeQuery& q,
                                 const onnx::NodeProto& node) {
  return All(node, {q.In(node, 0).elem, 1});
}
std::vector<ElemRank> Rank2Types(const TypeQuery& q,
                                 const onnx::NodeProto& node) {
  return All(node, {q.In(node, 0).elem, 2});
}
std::vector<ElemRank> ReshapeTypes(const TypeQuery& q,
                                   const onnx::NodeProto& node) {
  return All(node, {q.In(node, 0).elem, q.Length(node, 1)});
}
std::vector<ElemRank> ExpandTypes(const TypeQuery& q,
                                  const onnx::NodeProto& node) {
  const ElemRank x = q.In(node, 0);
  const int len = q.Length(node, 1);
  return All(node,
             {x.elem, len < 0 || x.rank < 0 ? -1 : std::max(len, x.rank)});
}
std::vector<ElemRank> ConstantOfShapeTypes(const TypeQuery& q,
                                           const onnx::NodeProto& node) {
  const auto* value = FindAttr(node, "value");
  return All(node, {value != nullptr ? value->t().data_type() : T::FLOAT,
                    q.Length(node, 0)});
}
std::vector<ElemRank> SqueezeTypes(const TypeQuery& q,
                                   const onnx::NodeProto& node) {
  const ElemRank x = q.In(node, 0);
  const int k = q.NumAxes(node);
  return All(node, {x.elem, k < 0 || x.rank < 0 ? -1 : x.rank - k});
}
std::vector<ElemRank> UnsqueezeTypes(const TypeQuery& q,
                                     const onnx::NodeProto& node) {
  const ElemRank x = q.In(node, 0);
  const int k = q.NumAxes(node);
  return All(node, {x.elem, k < 0 ? -1 : RankPlus(x.rank, k)});
}
std::vector<ElemRank> ConcatTypes(const TypeQuery& q,
                                  const onnx::NodeProto& node) {
  ElemRank er = q.In(node, 0);
  for (int i = 0; i < node.input_size() && er.rank < 0; ++i) {
    er.rank = q.In(node, i).rank;
  }
  return All(node, er);
}
// Every output as input 0 (Split).
std::vector<ElemRank> AllAsInput0Types(const TypeQuery& q,
                                       const onnx::NodeProto& node) {
  return All(node, q.In(node, 0));
}
std::vector<ElemRank> TopKTypes(const TypeQuery& q,
                                const onnx::NodeProto& node) {
  const ElemRank x = q.In(node, 0);
  return {x, {T::INT64, x.rank}};
}
std::vector<ElemRank> OneHotTypes(const TypeQuery& q,
                                  const onnx::NodeProto& node) {
  return All(node, {q.In(node, 2).elem, RankPlus(q.In(node, 0).rank, 1)});
}

// --- Gather, GatherElements, GatherND. ---

std::vector<ElemRank> GatherTypes(const TypeQuery& q,
                                  const onnx::NodeProto& node) {
  const ElemRank x = q.In(node, 0);
  const int ri = q.In(node, 1).rank;
  return All(node, {x.elem, x.rank < 0 || ri < 0 ? -1 : x.rank + ri - 1});
}
std::vector<ElemRank> GatherElementsTypes(const TypeQuery& q,
                                          const onnx::NodeProto& node) {
  return All(node, {q.In(node, 0).elem, q.In(node, 1).rank});
}
std::vector<ElemRank> GatherNDTypes(const TypeQuery& q,
                                    const onnx::NodeProto& node) {
  const ElemRank x = q.In(node, 0);
  const int q_rank = q.In(node, 1).rank;
  int last = -1;
  if (const onnx::TypeProto* type = q.Find(node.input(1));
      type != nullptr && q_rank > 0 && type->has_tensor_type()) {
    const auto& d = type->tensor_type().shape().dim(q_rank - 1);
    if (d.has_dim_value()) last = static_cast<int>(d.dim_value());
  } else if (const onnx::TensorProto* t = q.FindInitializer(node.input(1));
             t != nullptr && q_rank > 0) {
    last = static_cast<int>(t->dims(q_rank - 1));
  }
  const int b = static_cast<int>(AttrInt(node, "batch_dims", 0));
  return All(node, {x.elem, x.rank < 0 || q_rank < 0 || last < 0
                                ? -1
                                : x.rank + q_rank - last - 1 - b});
}

// --- Reduce*, ArgMax, ArgMin. ---

std::vector<ElemRank> ReduceTypes(const TypeQuery& q,
                                  const onnx::NodeProto& node) {
  const ElemRank x = q.In(node, 0);
  if (AttrInt(node, "keepdims", 1) != 0) return All(node, x);
  const int k = q.NumAxes(node);
  if (k == -2) return All(node, {x.elem, 0});  // no axes: every dim reduced
  return All(node, {x.elem, k < 0 ? -1 : RankPlus(x.rank, -k)});
}
std::vector<ElemRank> ArgTypes(const TypeQuery& q,
                               const onnx::NodeProto& node) {
  const ElemRank x = q.In(node, 0);
  if (AttrInt(node, "keepdims", 1) != 0) return All(node, {T::INT64, x.rank});
  return All(node, {T::INT64, RankPlus(x.rank, -1)});
}

// --- com.microsoft's attention and embedding ops. ---

std::vector<ElemRank> AttentionTypes(const TypeQuery& q,
                                     const onnx::NodeProto& node) {
  const int32_t elem = q.In(node, 0).elem;
  return {{elem, 3}, {elem, 5}, {elem, 4}};
}
std::vector<ElemRank> EmbedLayerNormTypes(const TypeQuery& q,
                                          const onnx::NodeProto& node) {
  const int32_t elem = q.In(node, 2).elem;  // the word embedding's
  return {{elem, 3}, {T::INT32, 1}, {elem, 3}};
}

// --- ai.onnx.ml's tensor ops. ---

std::vector<ElemRank> FloatSameRankTypes(const TypeQuery& q,
                                         const onnx::NodeProto& node) {
  return All(node, {T::FLOAT, q.In(node, 0).rank});
}
std::vector<ElemRank> OneHotEncoderTypes(const TypeQuery& q,
                                         const onnx::NodeProto& node) {
  return All(node, {T::FLOAT, RankPlus(q.In(node, 0).rank, 1)});
}
std::vector<ElemRank> ClassifierTypes(const TypeQuery& q,
                                      const onnx::NodeProto& node) {
  const bool strings = FindAttr(node, "classlabels_strings") != nullptr;
  return {{strings ? T::STRING : T::INT64, 1}, {T::FLOAT, 2}};
}
std::vector<ElemRank> RegressorTypes(const TypeQuery& q,
                                     const onnx::NodeProto& node) {
  return All(node, {T::FLOAT, 2});
}
std::vector<ElemRank> LabelEncoderTypes(const TypeQuery& q,
                                        const onnx::NodeProto& node) {
  const int32_t elem = FindAttr(node, "values_strings")  ? T::STRING
                       : FindAttr(node, "values_int64s") ? T::INT64
                       : FindAttr(node, "values_floats") ? T::FLOAT
                                                         : 0;
  return All(node, {elem, q.In(node, 0).rank});
}

}  // namespace rules

namespace {

// The rules over one graph (the main graph, or a body: then `parent` is the
// enclosing graph's rules, for names read from the outer scope).
class TypeRules : public TypeQuery {
 public:
  TypeRules(const onnx::GraphProto& graph_proto, TypeMap* types,
            const TypeRules* parent = nullptr)
      : types_(*types), parent_(parent) {
    for (const auto& t : graph_proto.initializer()) {
      initializers_[t.name()] = &t;
    }
    for (const auto& node : graph_proto.node()) {
      if (node.op_type() != "Constant" || node.output_size() != 1) continue;
      if (const auto* a = FindAttr(node, "value"); a != nullptr) {
        initializers_[node.output(0)] = &a->t();
      } else if (const auto* a = FindAttr(node, "value_ints"); a != nullptr) {
        ints_[node.output(0)].assign(a->ints().begin(), a->ints().end());
      }
    }
  }

  // Types `node`'s outputs. `inferred` is the same node as ONNX's inference
  // left it (its bodies hold inferred value_info), or `node` itself.
  void Apply(const onnx::NodeProto& node, const onnx::NodeProto& inferred) {
    bool all_complete = true;
    for (const auto& out : node.output()) {
      if (out.empty()) continue;
      auto it = types_.find(out);
      if (it == types_.end() || !IsCompleteType(it->second)) {
        all_complete = false;
      }
    }
    if (all_complete) return;
    std::vector<ElemRank> rule = Rule(node);
    for (int i = 0; i < node.output_size() && i < (int)rule.size(); ++i) {
      const std::string& out = node.output(i);
      if (out.empty()) continue;
      ElemRank known = Of(out);
      if (known.elem == 0) known.elem = rule[i].elem;
      if (known.rank < 0) known.rank = rule[i].rank;
      auto it = types_.find(out);
      if (it != types_.end() && !it->second.has_tensor_type() &&
          it->second.value_case() != onnx::TypeProto::VALUE_NOT_SET) {
        continue;  // a sequence/map: not ours to change
      }
      if (known.elem == 0 && known.rank < 0) continue;
      if (it != types_.end() && it->second.tensor_type().has_shape()) {
        it->second.mutable_tensor_type()->set_elem_type(known.elem);
      } else {
        types_[out] = TensorType(known);
      }
    }
    // Control flow and ZipMap: whole types from the bodies / attributes.
    if (node.op_type() == "If" || node.op_type() == "Loop") {
      ControlFlowTypes(inferred);
    } else if (node.op_type() == "ZipMap" && node.output_size() == 1) {
      onnx::TypeProto type;
      auto* map =
          type.mutable_sequence_type()->mutable_elem_type()->mutable_map_type();
      map->set_key_type(FindAttr(node, "classlabels_int64s") ? T::INT64
                                                             : T::STRING);
      map->mutable_value_type()->mutable_tensor_type()->set_elem_type(T::FLOAT);
      if (!types_.contains(node.output(0))) types_[node.output(0)] = type;
    }
  }

  // The type of `name` in this scope or an enclosing one; null if unknown.
  const onnx::TypeProto* Find(const std::string& name) const override {
    if (auto it = types_.find(name); it != types_.end()) return &it->second;
    return parent_ != nullptr ? parent_->Find(name) : nullptr;
  }
  const onnx::TensorProto* FindInitializer(
      const std::string& name) const override {
    if (auto it = initializers_.find(name); it != initializers_.end()) {
      return it->second;
    }
    return parent_ != nullptr ? parent_->FindInitializer(name) : nullptr;
  }
  ElemRank Of(const std::string& name) const {
    if (const onnx::TypeProto* type = Find(name)) {
      if (!type->has_tensor_type()) return {};
      const auto& tt = type->tensor_type();
      return {tt.elem_type(), tt.has_shape() ? tt.shape().dim_size() : -1};
    }
    if (const onnx::TensorProto* t = FindInitializer(name)) {
      return {t->data_type(), t->dims_size()};
    }
    return {};
  }
  ElemRank In(const onnx::NodeProto& node, int i) const override {
    if (i >= node.input_size() || node.input(i).empty()) return {};
    return Of(node.input(i));
  }
  // Length of a 1-D int input: its constant value, else its inferred dim.
  int Length(const onnx::NodeProto& node, int i) const override {
    if (i >= node.input_size() || node.input(i).empty()) return -1;
    if (auto v = Ints(node.input(i))) return static_cast<int>(v->size());
    const onnx::TypeProto* type = Find(node.input(i));
    if (type == nullptr || !type->has_tensor_type()) return -1;
    const auto& shape = type->tensor_type().shape();
    if (shape.dim_size() != 1 || !shape.dim(0).has_dim_value()) return -1;
    return static_cast<int>(shape.dim(0).dim_value());
  }

 private:
  std::optional<std::vector<int64_t>> Ints(const std::string& name) const {
    if (auto it = ints_.find(name); it != ints_.end()) return it->second;
    if (const onnx::TensorProto* t = FindInitializer(name)) {
      return TensorInts(*t);
    }
    return parent_ != nullptr ? parent_->Ints(name) : std::nullopt;
  }
  // Axes of Squeeze/Unsqueeze/Reduce*: the attribute (older opsets) or
  // input 1; -1 when unknown, -2 when absent.
  int NumAxes(const onnx::NodeProto& node) const override {
    if (const auto* a = FindAttr(node, "axes"); a != nullptr) {
      return a->ints_size();
    }
    if (node.input_size() < 2 || node.input(1).empty()) return -2;
    return Length(node, 1);
  }

  // The outputs' element type and rank by the op's entry in the one
  // fallback table (graph/op_rules.h); unknown ({}) for an op without one.
  std::vector<ElemRank> Rule(const onnx::NodeProto& node) const {
    const OpRule* rule = FindOpRule(node.op_type());
    if (rule == nullptr || rule->type == nullptr) {
      return std::vector<ElemRank>(node.output_size());
    }
    return rule->type(*this, node);
  }

  // If: each output as the branches declare it, else as the rules type the
  // branch inside. Loop: loop-carried values as the body's outputs 1..N
  // (else the node's initial values), scan outputs one rank more than the
  // body's.
  void ControlFlowTypes(const onnx::NodeProto& node) {
    auto set = [this](const std::string& name, const onnx::TypeProto& type) {
      if (name.empty() || !IsCompleteType(type)) return;
      auto it = types_.find(name);
      if (it == types_.end() || !IsCompleteType(it->second)) {
        types_[name] = type;
      }
    };
    if (node.op_type() == "If") {
      // The branches must agree: exporters write "squeeze the dim if it is
      // 1" as an If whose branches differ in rank, known only at run time.
      const auto* then_branch = FindAttr(node, "then_branch");
      const auto* else_branch = FindAttr(node, "else_branch");
      if (then_branch == nullptr || else_branch == nullptr) return;
      for (int i = 0;
           i < node.output_size() && i < then_branch->g().output_size() &&
           i < else_branch->g().output_size();
           ++i) {
        const onnx::TypeProto a = BodyOutputType(then_branch->g(), i);
        const onnx::TypeProto b = BodyOutputType(else_branch->g(), i);
        if (!IsCompleteType(a) || !IsCompleteType(b)) continue;
        if (!a.has_tensor_type() || !b.has_tensor_type()) {
          if (TypeName(a) == TypeName(b)) set(node.output(i), a);
          continue;
        }
        const auto& sa = a.tensor_type().shape();
        const auto& sb = b.tensor_type().shape();
        if (a.tensor_type().elem_type() != b.tensor_type().elem_type() ||
            sa.dim_size() != sb.dim_size()) {
          continue;
        }
        onnx::TypeProto merged = a;
        for (int d = 0; d < sa.dim_size(); ++d) {
          if (sa.dim(d).SerializeAsString() != sb.dim(d).SerializeAsString()) {
            merged.mutable_tensor_type()
                ->mutable_shape()
                ->mutable_dim(d)
                ->Clear();
          }
        }
        set(node.output(i), merged);
      }
      return;
    }
    const auto* body = FindAttr(node, "body");
    if (body == nullptr) return;
    const onnx::GraphProto& g = body->g();
    const int carried = std::max(0, node.input_size() - 2);
    for (int i = 0; i < node.output_size() && i + 1 < g.output_size(); ++i) {
      const onnx::TypeProto t = BodyOutputType(g, i + 1);
      if (i < carried) {
        if (IsCompleteType(t)) {
          set(node.output(i), t);
        } else if (const onnx::TypeProto* init = Find(node.input(i + 2))) {
          set(node.output(i), *init);
        }
      } else if (t.has_tensor_type() && t.tensor_type().has_shape()) {
        onnx::TypeProto scan = t;
        auto* shape = scan.mutable_tensor_type()->mutable_shape();
        shape->add_dim();
        for (int d = shape->dim_size() - 1; d > 0; --d) {
          shape->mutable_dim()->SwapElements(d, d - 1);
        }
        shape->mutable_dim(0)->Clear();
        set(node.output(i), scan);
      }
    }
  }

  // Output `i` of `body` as declared, else as the rules type it inside the
  // body (names of the outer scope seen through this scope).
  onnx::TypeProto BodyOutputType(const onnx::GraphProto& body, int i) {
    if (IsCompleteType(body.output(i).type())) return body.output(i).type();
    auto [it, inserted] = body_types_.try_emplace(&body);
    if (inserted) {
      // A named reference: clang 14 cannot capture a structured binding.
      auto& types = it->second;
      auto add = [&](const onnx::ValueInfoProto& vi) {
        if (vi.has_type()) types[vi.name()] = vi.type();
      };
      for (const auto& vi : body.value_info()) add(vi);
      for (const auto& vi : body.input()) add(vi);
      for (const auto& vi : body.output()) add(vi);
      TypeRules inner(body, &it->second, this);
      for (const auto& n : body.node()) inner.Apply(n, n);
    }
    auto found = it->second.find(body.output(i).name());
    return found != it->second.end() ? found->second : body.output(i).type();
  }

  TypeMap& types_;
  const TypeRules* parent_;
  absl::flat_hash_map<std::string, const onnx::TensorProto*> initializers_;
  // Types inside the bodies typed so far (BodyOutputType).
  absl::flat_hash_map<const onnx::GraphProto*, TypeMap> body_types_;
  absl::flat_hash_map<std::string, std::vector<int64_t>> ints_;
};

}  // namespace

void ApplyTypeRules(const onnx::GraphProto& graph_proto, const Graph& graph,
                    TypeMap* types,
                    const std::vector<const onnx::NodeProto*>& inferred) {
  TypeRules rules(graph_proto, types);
  for (NodeId id : graph.topological_order()) {
    const onnx::NodeProto* twin =
        id < static_cast<NodeId>(inferred.size()) ? inferred[id] : nullptr;
    rules.Apply(graph.node(id), twin != nullptr ? *twin : graph.node(id));
  }
}

}  // namespace autoshard
