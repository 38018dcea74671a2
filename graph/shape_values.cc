#include "graph/shape_values.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "graph/graph.h"
#include "graph/shape_values_internal.h"

// Note [Evaluating shape arithmetic]
// Values follow the ONNX operator spec (and onnxruntime where the spec is
// silent): integer Div truncates toward zero, integer Mod takes the divisor's
// sign unless fmod=1, Cast from float to int truncates, Round is half to
// even. FLOAT results are rounded to float32 after every op, so a chain such
// as Cast(float) -> Mul(scale) -> Floor gives what a float32 runtime gives.
// Pow's result has the base's type (Pow(int64 3, float 0.5) = 1). Integer
// overflow (values, sizes, steps, repeats), division by zero (integer or
// float, Reciprocal of 0 included) and a float that does not fit an integer
// make the op give no value rather than a wrong one. Sizes are products of
// dims, never quotients of the element count, so an empty tensor (a 0 dim)
// evaluates like any other: Gather, Flatten, Tile, ReduceSum of one give the
// spec's empty or neutral result.

namespace autoshard {

using onnx::TensorProto;

int64_t ShapeValue::NumElements() const {
  int64_t n = 1;
  for (int64_t d : dims) n = SaturatingMul(n, d);
  return n;
}

TensorInfo ShapeValue::Info() const {
  TensorInfo info;
  info.elem_type = elem_type;
  info.rank_known = true;
  info.dims = dims;
  return info;
}

bool ShapeValue::IsFloatType(int32_t elem_type) {
  return elem_type == TensorProto::FLOAT || elem_type == TensorProto::DOUBLE ||
         elem_type == TensorProto::FLOAT16 ||
         elem_type == TensorProto::BFLOAT16;
}

namespace values_internal {

int64_t NumElementsCapped(absl::Span<const int64_t> dims) {
  // The product of the non-zero dims is bounded too, so that no product of
  // some of the dims (a stride, an outer or inner size) can overflow, even
  // in a tensor that a 0 dim makes empty.
  int64_t nonzero = 1;
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (d > kMaxValueElements / nonzero) return -1;
    nonzero *= d;
  }
  return empty ? 0 : nonzero;
}

bool WellFormed(const ShapeValue& v) {
  const int64_t n = NumElementsCapped(v.dims);
  if (n < 0) return false;
  const size_t used = static_cast<size_t>(n);
  return v.is_float() ? v.floats.size() == used && v.ints.empty()
                      : v.ints.size() == used && v.floats.empty();
}

std::optional<ShapeValue> MakeValue(int32_t elem_type,
                                    std::vector<int64_t> dims) {
  const int64_t n = NumElementsCapped(dims);
  if (n < 0) return std::nullopt;
  ShapeValue v;
  v.elem_type = elem_type;
  v.dims = std::move(dims);
  if (v.is_float()) {
    v.floats.assign(n, 0.0);
  } else {
    v.ints.assign(n, 0);
  }
  return v;
}

std::optional<int64_t> TruncToInt64(double x) {
  const double t = std::trunc(x);
  if (!(t >= -9.2233720368547758e18 && t < 9.2233720368547758e18)) {
    return std::nullopt;
  }
  return static_cast<int64_t>(t);
}

void Normalize(ShapeValue* v) {
  switch (v->elem_type) {
    case TensorProto::FLOAT:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      for (double& x : v->floats) x = static_cast<float>(x);
      break;
    case TensorProto::BOOL:
      for (int64_t& x : v->ints) x = x != 0;
      break;
    case TensorProto::INT32:
      for (int64_t& x : v->ints) x = static_cast<int32_t>(x);
      break;
    case TensorProto::INT16:
      for (int64_t& x : v->ints) x = static_cast<int16_t>(x);
      break;
    case TensorProto::INT8:
      for (int64_t& x : v->ints) x = static_cast<int8_t>(x);
      break;
    case TensorProto::UINT8:
      for (int64_t& x : v->ints) x = static_cast<uint8_t>(x);
      break;
    case TensorProto::UINT16:
      for (int64_t& x : v->ints) x = static_cast<uint16_t>(x);
      break;
    case TensorProto::UINT32:
      for (int64_t& x : v->ints) x = static_cast<uint32_t>(x);
      break;
    default:
      break;
  }
}

std::vector<int64_t> Strides(absl::Span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

std::optional<std::vector<int64_t>> BroadcastDims(absl::Span<const int64_t> a,
                                                  absl::Span<const int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> BroadcastIndices(absl::Span<const int64_t> in,
                                      absl::Span<const int64_t> out) {
  const size_t rank = out.size();
  const size_t offset = rank - in.size();
  // Stride of each output axis in the input; 0 where the input broadcasts.
  std::vector<int64_t> stride(rank, 0);
  const std::vector<int64_t> in_strides = Strides(in);
  for (size_t i = offset; i < rank; ++i) {
    stride[i] = in[i - offset] == 1 ? 0 : in_strides[i - offset];
  }
  int64_t n = 1;
  for (int64_t d : out) n *= d;
  std::vector<int64_t> indices(n);
  std::vector<int64_t> counter(rank, 0);
  int64_t at = 0;
  for (int64_t k = 0; k < n; ++k) {
    indices[k] = at;
    for (int i = static_cast<int>(rank) - 1; i >= 0; --i) {
      at += stride[i];
      if (++counter[i] < out[i]) break;
      at -= stride[i] * counter[i];
      counter[i] = 0;
    }
  }
  return indices;
}

int64_t NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < 0) axis += rank;
  return axis >= 0 && axis < rank ? axis : -1;
}

std::optional<std::vector<int64_t>> IntList(const ShapeValue* v) {
  if (v == nullptr || v->is_float() || v->dims.size() > 1) return std::nullopt;
  return v->ints;
}

namespace {

using EvalFn = Outputs (*)(const EvalCtx&);

const absl::flat_hash_map<std::string_view, EvalFn>& EvalTable() {
  static const auto* const kTable = [] {
    auto* t = new absl::flat_hash_map<std::string_view, EvalFn>;
    for (std::string_view op :
         {"Add", "Sub", "Mul", "Div", "Mod", "Pow", "Min", "Max", "Sum", "Mean",
          "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And",
          "Or", "Xor"}) {
      (*t)[op] = EvalBinary;
    }
    for (std::string_view op : {"Neg", "Abs", "Sign", "Floor", "Ceil", "Round",
                                "Sqrt", "Reciprocal", "Relu", "Not"}) {
      (*t)[op] = EvalUnary;
    }
    (*t)["Cast"] = EvalCast;
    (*t)["Identity"] = EvalIdentity;
    (*t)["Constant"] = EvalConstant;
    (*t)["Where"] = EvalWhere;
    (*t)["Shape"] = EvalShape;
    (*t)["Size"] = EvalSize;
    (*t)["Gather"] = EvalGather;
    (*t)["Slice"] = EvalSlice;
    (*t)["Concat"] = EvalConcat;
    (*t)["Unsqueeze"] = EvalUnsqueeze;
    (*t)["Squeeze"] = EvalSqueeze;
    (*t)["Reshape"] = EvalReshape;
    (*t)["Flatten"] = EvalFlatten;
    (*t)["Transpose"] = EvalTranspose;
    (*t)["Range"] = EvalRange;
    (*t)["ConstantOfShape"] = EvalConstantOfShape;
    (*t)["Expand"] = EvalExpand;
    (*t)["Tile"] = EvalTile;
    (*t)["NonZero"] = EvalNonZero;
    (*t)["Split"] = EvalSplit;
    for (std::string_view op :
         {"ReduceProd", "ReduceSum", "ReduceMin", "ReduceMax", "ReduceMean"}) {
      (*t)[op] = EvalReduce;
    }
    return t;
  }();
  return *kTable;
}

// Reads `n` little-endian elements of type T from raw bytes.
template <typename T>
bool ReadRaw(const std::string& raw, int64_t n, std::vector<T>* out) {
  if (static_cast<int64_t>(raw.size()) < n * static_cast<int64_t>(sizeof(T))) {
    return false;
  }
  out->resize(n);
  if (n > 0) std::memcpy(out->data(), raw.data(), n * sizeof(T));
  return true;
}

// Copies `n` elements of a typed field (or of raw_data read as Raw) into
// `dest`, converted to D.
template <typename Raw, typename D, typename Field>
bool ReadField(const TensorProto& t, const Field& field, int64_t n,
               std::vector<D>* dest) {
  if (t.has_raw_data()) {
    std::vector<Raw> raw;
    if (!ReadRaw(t.raw_data(), n, &raw)) return false;
    dest->assign(raw.begin(), raw.end());
    return true;
  }
  if (field.size() < n) return false;
  dest->assign(field.begin(), field.begin() + n);
  return true;
}

}  // namespace
}  // namespace values_internal

using values_internal::EvalCtx;
using values_internal::EvalTable;
using values_internal::Normalize;
using values_internal::NumElementsCapped;
using values_internal::Outputs;
using values_internal::ReadField;

std::optional<ShapeValue> ValueFromTensor(const TensorProto& t) {
  if (t.data_location() == TensorProto::EXTERNAL) return std::nullopt;
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  const int64_t n = NumElementsCapped(dims);
  if (n < 0) return std::nullopt;
  ShapeValue v;
  v.elem_type = t.data_type();
  v.dims = std::move(dims);
  bool ok = false;
  switch (t.data_type()) {
    case TensorProto::INT64:
      ok = ReadField<int64_t>(t, t.int64_data(), n, &v.ints);
      break;
    case TensorProto::INT32:
      ok = ReadField<int32_t>(t, t.int32_data(), n, &v.ints);
      break;
    case TensorProto::INT16:
      ok = ReadField<int16_t>(t, t.int32_data(), n, &v.ints);
      break;
    case TensorProto::INT8:
      ok = ReadField<int8_t>(t, t.int32_data(), n, &v.ints);
      break;
    case TensorProto::UINT16:
      ok = ReadField<uint16_t>(t, t.int32_data(), n, &v.ints);
      break;
    case TensorProto::UINT8:
    case TensorProto::BOOL:
      ok = ReadField<uint8_t>(t, t.int32_data(), n, &v.ints);
      break;
    case TensorProto::UINT32:
      ok = ReadField<uint32_t>(t, t.uint64_data(), n, &v.ints);
      break;
    case TensorProto::FLOAT:
      ok = ReadField<float>(t, t.float_data(), n, &v.floats);
      break;
    case TensorProto::DOUBLE:
      ok = ReadField<double>(t, t.double_data(), n, &v.floats);
      break;
    default:  // UINT64 (may not fit), FLOAT16, strings, complex...
      return std::nullopt;
  }
  if (!ok) return std::nullopt;
  Normalize(&v);
  return v;
}

TensorProto ValueToTensor(const ShapeValue& v, const std::string& name) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(v.elem_type);
  for (int64_t d : v.dims) t.add_dims(d);
  switch (v.elem_type) {
    case TensorProto::INT64:
      for (int64_t x : v.ints) t.add_int64_data(x);
      break;
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      for (int64_t x : v.ints) t.add_uint64_data(static_cast<uint64_t>(x));
      break;
    case TensorProto::FLOAT:
      for (double x : v.floats) t.add_float_data(static_cast<float>(x));
      break;
    case TensorProto::DOUBLE:
      for (double x : v.floats) t.add_double_data(x);
      break;
    default:  // INT32, INT16, INT8, UINT16, UINT8, BOOL
      for (int64_t x : v.ints) t.add_int32_data(static_cast<int32_t>(x));
      break;
  }
  return t;
}

std::optional<ShapeValue> ConstantNodeValue(const onnx::NodeProto& node) {
  for (const auto& attr : node.attribute()) {
    const std::string& name = attr.name();
    if (name == "value" && attr.has_t()) return ValueFromTensor(attr.t());
    ShapeValue v;
    if (name == "value_int" || name == "value_ints") {
      v.elem_type = TensorProto::INT64;
      if (name == "value_int") {
        v.ints = {attr.i()};
      } else {
        v.ints.assign(attr.ints().begin(), attr.ints().end());
        v.dims = {attr.ints_size()};
      }
    } else if (name == "value_float" || name == "value_floats") {
      v.elem_type = TensorProto::FLOAT;
      if (name == "value_float") {
        v.floats = {attr.f()};
      } else {
        v.floats.assign(attr.floats().begin(), attr.floats().end());
        v.dims = {attr.floats_size()};
      }
    } else {
      continue;
    }
    if (NumElementsCapped(v.dims) < 0) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

bool IsEvaluableOp(const onnx::NodeProto& node) {
  return IsDefaultDomain(node.domain()) && EvalTable().contains(node.op_type());
}

std::vector<std::optional<ShapeValue>> EvaluateNode(
    const onnx::NodeProto& node, int64_t opset,
    absl::Span<const EvalInput> inputs) {
  std::vector<std::optional<ShapeValue>> out(node.output_size());
  if (!IsDefaultDomain(node.domain())) return out;
  auto it = EvalTable().find(node.op_type());
  if (it == EvalTable().end()) return out;
  // A value whose data does not match its dims counts as unknown, so that
  // no op reads past its data.
  std::vector<EvalInput> checked(inputs.begin(), inputs.end());
  for (EvalInput& in : checked) {
    if (in.value != nullptr && !values_internal::WellFormed(*in.value)) {
      in.value = nullptr;
    }
  }
  const EvalCtx ctx{node, opset, checked};
  Outputs got = it->second(ctx);
  for (size_t i = 0; i < got.size() && i < out.size(); ++i) {
    if (got[i] && values_internal::WellFormed(*got[i])) {
      out[i] = std::move(got[i]);
    }
  }
  return out;
}

}  // namespace autoshard
