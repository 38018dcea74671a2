// The fallback type rules of graph/tensor_types.h (ApplyTypeRules): element
// type and rank where ONNX's inference and the shape rules
// (graph/shape_rules.h) leave a tensor unknown.
#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/node_attributes.h"
#include "graph/shape_rules.h"
#include "graph/tensor_types.h"

namespace autoshard {
namespace {

using T = onnx::TensorProto;

// What a rule knows of one tensor: element type (0: unknown) and rank (-1:
// unknown).
struct ElemRank {
  int32_t elem = 0;
  int rank = -1;
};

// Constant int tensors longer than this are not read (axes are short).
constexpr int kMaxConstantInts = 64;

// Tensor ops whose outputs have the type and rank of input 0.
const absl::flat_hash_set<std::string>& SameAsInput0() {
  static const auto* ops = new absl::flat_hash_set<std::string>{
      "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "AveragePool",
      "BatchNormalization", "Celu", "Ceil", "Clip", "Conv", "ConvTranspose",
      "Cos", "Cosh", "CumSum", "DepthToSpace", "Dropout", "Elu", "Erf", "Exp",
      "Floor", "Gelu", "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool",
      "HardSigmoid", "HardSwish", "Hardmax", "Identity",
      "InstanceNormalization", "LRN", "LayerNormalization", "LeakyRelu", "Log",
      "LogSoftmax", "LpNormalization", "LpPool", "MaxPool",
      "MeanVarianceNormalization", "Mish", "Neg", "Pad", "Reciprocal", "Relu",
      "Resize", "ReverseSequence", "Round", "Scatter", "ScatterElements",
      "ScatterND", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Slice",
      "Softmax", "Softplus", "Softsign", "SpaceToDepth", "Sqrt", "Tan", "Tanh",
      "ThresholdedRelu", "Tile", "Transpose", "Trilu", "Upsample",
      // com.microsoft (same names, other domain)
      "FastGelu", "BiasGelu", "QuickGelu", "BiasAdd", "FusedConv",
      "SimplifiedLayerNormalization", "SkipLayerNormalization",
      "SkipSimplifiedLayerNormalization",
      // ai.onnx.ml
      "Imputer", "Binarizer", "ArrayFeatureExtractor"};
  return *ops;
}

bool IsReduction(const std::string& op) {
  return absl::StartsWith(op, "Reduce") || op == "ArgMax" || op == "ArgMin";
}

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

// The rules over one graph (the main graph, or a body: then `parent` is the
// enclosing graph's rules, for names read from the outer scope).
class TypeRules {
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

 private:
  // The type of `name` in this scope or an enclosing one; null if unknown.
  const onnx::TypeProto* Find(const std::string& name) const {
    if (auto it = types_.find(name); it != types_.end()) return &it->second;
    return parent_ != nullptr ? parent_->Find(name) : nullptr;
  }
  const onnx::TensorProto* FindInitializer(const std::string& name) const {
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
  ElemRank In(const onnx::NodeProto& node, int i) const {
    if (i >= node.input_size() || node.input(i).empty()) return {};
    return Of(node.input(i));
  }
  // Length of a 1-D int input: its constant value, else its inferred dim.
  int Length(const onnx::NodeProto& node, int i) const {
    if (i >= node.input_size() || node.input(i).empty()) return -1;
    if (auto v = Ints(node.input(i))) return static_cast<int>(v->size());
    const onnx::TypeProto* type = Find(node.input(i));
    if (type == nullptr || !type->has_tensor_type()) return -1;
    const auto& shape = type->tensor_type().shape();
    if (shape.dim_size() != 1 || !shape.dim(0).has_dim_value()) return -1;
    return static_cast<int>(shape.dim(0).dim_value());
  }
  std::optional<std::vector<int64_t>> Ints(const std::string& name) const {
    if (auto it = ints_.find(name); it != ints_.end()) return it->second;
    if (const onnx::TensorProto* t = FindInitializer(name)) {
      return TensorInts(*t);
    }
    return parent_ != nullptr ? parent_->Ints(name) : std::nullopt;
  }
  // Axes of Squeeze/Unsqueeze/Reduce*: the attribute (older opsets) or
  // input 1; -1 when unknown, -2 when absent.
  int NumAxes(const onnx::NodeProto& node) const {
    if (const auto* a = FindAttr(node, "axes"); a != nullptr) {
      return a->ints_size();
    }
    if (node.input_size() < 2 || node.input(1).empty()) return -2;
    return Length(node, 1);
  }

  // The outputs' element type and rank, by op family; unknown ({}) for an
  // op no family knows.
  std::vector<ElemRank> Rule(const onnx::NodeProto& node) const {
    for (auto family : {&TypeRules::ElementwiseRule, &TypeRules::MatMulRule,
                        &TypeRules::ShapeRule, &TypeRules::GatherRule,
                        &TypeRules::ReductionRule, &TypeRules::ContribRule,
                        &TypeRules::MlRule}) {
      if (std::optional<std::vector<ElemRank>> out = (this->*family)(node))
        return *std::move(out);
    }
    return All(node, {});
  }

  using Outputs = std::optional<std::vector<ElemRank>>;

  // Every output of `node` typed `er`.
  static std::vector<ElemRank> All(const onnx::NodeProto& node, ElemRank er) {
    return std::vector<ElemRank>(node.output_size(), er);
  }
  // Rank r + k; unknown (-1) stays unknown.
  static int RankPlus(int r, int k) { return r < 0 ? -1 : r + k; }

  // Unary and broadcasting elementwise ops, casts, predicates.
  Outputs ElementwiseRule(const onnx::NodeProto& node) const {
    const std::string& op = node.op_type();
    const ElemRank x = In(node, 0);
    if (SameAsInput0().contains(op)) {
      // Dropout's mask, MaxPool's indices, LayerNormalization's statistics:
      // only output 0 (and SkipLayerNormalization's sum, output 3) are
      // rank(input 0) of its type.
      const int n = node.output_size();
      std::vector<ElemRank> out(n);
      out[0] = x;
      if (op == "SkipLayerNormalization" && n > 3) out[3] = x;
      if (op == "Dropout" && n > 1) out[1] = {T::BOOL, x.rank};
      return out;
    }
    if (IsBroadcastOp(op)) {  // rank: the largest input rank
      int rank = 0;
      for (int i = 0; i < node.input_size(); ++i) {
        const int r = In(node, i).rank;
        rank = r < 0 || rank < 0 ? -1 : std::max(rank, r);
      }
      int32_t elem = op == "Where" ? In(node, 1).elem : x.elem;
      if (op == "Equal" || op == "Greater" || op == "GreaterOrEqual" ||
          op == "Less" || op == "LessOrEqual" || op == "And" || op == "Or" ||
          op == "Xor") {
        elem = T::BOOL;
      }
      return All(node, {elem, rank});
    }
    if (op == "Cast") {
      return All(node, {(int32_t)AttrInt(node, "to", 0), x.rank});
    }
    if (op == "CastLike") return All(node, {In(node, 1).elem, x.rank});
    if (op == "Not" || op == "IsNaN" || op == "IsInf") {
      return All(node, {T::BOOL, x.rank});
    }
    return std::nullopt;
  }

  // MatMul and the quantized ops.
  Outputs MatMulRule(const onnx::NodeProto& node) const {
    const std::string& op = node.op_type();
    const ElemRank x = In(node, 0);
    if (op == "MatMul" || op == "MatMulInteger" || op == "FusedMatMul" ||
        op == "QLinearMatMul") {
      const int b = op == "QLinearMatMul" ? 3 : 1;
      const int ra = x.rank, rb = In(node, b).rank;
      int rank = -1;
      if (ra >= 1 && rb >= 1) {
        rank = ra == 1 && rb == 1 ? 0
               : ra == 1          ? rb - 1
               : rb == 1          ? ra - 1
                                  : std::max(ra, rb);
      }
      const int32_t elem = op == "MatMulInteger"   ? T::INT32
                           : op == "QLinearMatMul" ? In(node, 7).elem
                                                   : x.elem;
      return All(node, {elem, rank});
    }
    if (op == "ConvInteger") return All(node, {T::INT32, x.rank});
    if (op == "QLinearConv") return All(node, {In(node, 7).elem, x.rank});
    if (op == "DequantizeLinear") return All(node, {In(node, 1).elem, x.rank});
    if (op == "QuantizeLinear") {
      const int32_t zp = In(node, 2).elem;
      return All(node, {zp != 0 ? zp : T::UINT8, x.rank});
    }
    if (op == "DynamicQuantizeLinear") {
      return std::vector<ElemRank>{
          {T::UINT8, x.rank}, {T::FLOAT, 0}, {T::UINT8, 0}};
    }
    return std::nullopt;
  }

  // Ops that make, reshape, join or split tensors.
  Outputs ShapeRule(const onnx::NodeProto& node) const {
    const std::string& op = node.op_type();
    const ElemRank x = In(node, 0);
    if (op == "Shape") return All(node, {T::INT64, 1});
    if (op == "Size") return All(node, {T::INT64, 0});
    if (op == "NonZero" || op == "NonMaxSuppression") {
      return All(node, {T::INT64, 2});
    }
    if (op == "Range") return All(node, {x.elem, 1});
    if (op == "Flatten" || op == "Gemm") return All(node, {x.elem, 2});
    if (op == "Reshape") return All(node, {x.elem, Length(node, 1)});
    if (op == "Expand") {
      const int len = Length(node, 1);
      return All(node,
                 {x.elem, len < 0 || x.rank < 0 ? -1 : std::max(len, x.rank)});
    }
    if (op == "ConstantOfShape") {
      const auto* value = FindAttr(node, "value");
      return All(node, {value != nullptr ? value->t().data_type() : T::FLOAT,
                        Length(node, 0)});
    }
    if (op == "Squeeze") {
      const int k = NumAxes(node);
      return All(node, {x.elem, k < 0 || x.rank < 0 ? -1 : x.rank - k});
    }
    if (op == "Unsqueeze") {
      const int k = NumAxes(node);
      return All(node, {x.elem, k < 0 ? -1 : RankPlus(x.rank, k)});
    }
    if (op == "Concat") {
      ElemRank er = x;
      for (int i = 0; i < node.input_size() && er.rank < 0; ++i) {
        er.rank = In(node, i).rank;
      }
      return All(node, er);
    }
    if (op == "Split") return All(node, x);
    if (op == "TopK") return std::vector<ElemRank>{x, {T::INT64, x.rank}};
    if (op == "OneHot") {
      return All(node, {In(node, 2).elem, RankPlus(x.rank, 1)});
    }
    return std::nullopt;
  }

  // Gather, GatherElements, GatherND.
  Outputs GatherRule(const onnx::NodeProto& node) const {
    const std::string& op = node.op_type();
    const ElemRank x = In(node, 0);
    if (op == "Gather") {
      const int ri = In(node, 1).rank;
      return All(node, {x.elem, x.rank < 0 || ri < 0 ? -1 : x.rank + ri - 1});
    }
    if (op == "GatherElements") return All(node, {x.elem, In(node, 1).rank});
    if (op != "GatherND") return std::nullopt;
    const int q = In(node, 1).rank;
    int last = -1;
    if (const onnx::TypeProto* type = Find(node.input(1));
        type != nullptr && q > 0 && type->has_tensor_type()) {
      const auto& d = type->tensor_type().shape().dim(q - 1);
      if (d.has_dim_value()) last = static_cast<int>(d.dim_value());
    } else if (const onnx::TensorProto* t = FindInitializer(node.input(1));
               t != nullptr && q > 0) {
      last = static_cast<int>(t->dims(q - 1));
    }
    const int b = static_cast<int>(AttrInt(node, "batch_dims", 0));
    return All(node, {x.elem, x.rank < 0 || q < 0 || last < 0
                                  ? -1
                                  : x.rank + q - last - 1 - b});
  }

  // Reduce*, ArgMax, ArgMin.
  Outputs ReductionRule(const onnx::NodeProto& node) const {
    const std::string& op = node.op_type();
    if (!IsReduction(op)) return std::nullopt;
    const ElemRank x = In(node, 0);
    const int32_t elem = op == "ArgMax" || op == "ArgMin" ? T::INT64 : x.elem;
    if (AttrInt(node, "keepdims", 1) != 0) return All(node, {elem, x.rank});
    if (op == "ArgMax" || op == "ArgMin") {
      return All(node, {elem, RankPlus(x.rank, -1)});
    }
    const int k = NumAxes(node);
    if (k == -2) return All(node, {elem, 0});  // no axes: every dim reduced
    return All(node, {elem, k < 0 ? -1 : RankPlus(x.rank, -k)});
  }

  // com.microsoft's attention and embedding ops.
  Outputs ContribRule(const onnx::NodeProto& node) const {
    const std::string& op = node.op_type();
    const ElemRank x = In(node, 0);
    if (op == "Attention" || op == "MultiHeadAttention") {
      return std::vector<ElemRank>{{x.elem, 3}, {x.elem, 5}, {x.elem, 4}};
    }
    if (op == "EmbedLayerNormalization") {
      const int32_t elem = In(node, 2).elem;  // the word embedding's
      return std::vector<ElemRank>{{elem, 3}, {T::INT32, 1}, {elem, 3}};
    }
    return std::nullopt;
  }

  // ai.onnx.ml's tensor ops.
  Outputs MlRule(const onnx::NodeProto& node) const {
    const std::string& op = node.op_type();
    const ElemRank x = In(node, 0);
    if (op == "Scaler" || op == "Normalizer") {
      return All(node, {T::FLOAT, x.rank});
    }
    if (op == "OneHotEncoder") {
      return All(node, {T::FLOAT, RankPlus(x.rank, 1)});
    }
    if (op == "LinearClassifier" || op == "SVMClassifier" ||
        op == "TreeEnsembleClassifier") {
      const bool strings = FindAttr(node, "classlabels_strings") != nullptr;
      return std::vector<ElemRank>{{strings ? T::STRING : T::INT64, 1},
                                   {T::FLOAT, 2}};
    }
    if (op == "LinearRegressor" || op == "SVMRegressor" ||
        op == "TreeEnsembleRegressor" || op == "FeatureVectorizer") {
      return All(node, {T::FLOAT, 2});
    }
    if (op == "LabelEncoder") {
      const int32_t elem = FindAttr(node, "values_strings")  ? T::STRING
                           : FindAttr(node, "values_int64s") ? T::INT64
                           : FindAttr(node, "values_floats") ? T::FLOAT
                                                             : 0;
      return All(node, {elem, x.rank});
    }
    return std::nullopt;
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
