// Element-wise ops of the value evaluator (shape_values.h): arithmetic,
// comparisons and logic with numpy broadcasting, the unary ops, Cast,
// Identity, Constant and Where, as the ONNX operator spec defines them
// (Note [Evaluating shape arithmetic] in shape_values.cc).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/shape_values_internal.h"

namespace autoshard::values_internal {
namespace {

using onnx::TensorProto;

// --- Element-wise ops. ---

// One element of a binary op: integer and float forms; false = no value.
struct BinaryOp {
  std::function<bool(int64_t, int64_t, int64_t*)> on_ints;
  std::function<bool(double, double, double*)> on_floats;
  bool to_bool = false;  // comparisons and logic ops give BOOL
};

bool IntPow(int64_t base, int64_t exp, int64_t* out) {
  if (exp < 0) return false;
  if (exp == 0 || base == 0 || base == 1) {
    *out = exp == 0 ? 1 : base;
    return true;
  }
  if (base == -1) {
    *out = exp % 2 == 0 ? 1 : -1;
    return true;
  }
  // |base| >= 2: overflows within 63 multiplications.
  int64_t r = 1;
  for (int64_t i = 0; i < exp; ++i) {
    if (__builtin_mul_overflow(r, base, &r)) return false;
  }
  *out = r;
  return true;
}

// Integer Mod: Python's sign rule (the divisor's) unless `fmod`.
bool IntMod(int64_t a, int64_t b, bool fmod, int64_t* out) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return false;
  int64_t r = a % b;
  if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
  *out = r;
  return true;
}

// Add (and Sum's pairs), Sub, Mul, Div, Mod (`node` gives its fmod) and
// Pow; integers fail (no value) on overflow and division by zero.
std::optional<BinaryOp> ArithmeticOp(std::string_view op,
                                     const onnx::NodeProto& node) {
  if (op == "Add" || op == "Sum") {
    return BinaryOp{
        [](int64_t a, int64_t b, int64_t* o) {
          return !__builtin_add_overflow(a, b, o);
        },
        [](double a, double b, double* o) { return *o = a + b, true; }};
  }
  if (op == "Sub") {
    return BinaryOp{
        [](int64_t a, int64_t b, int64_t* o) {
          return !__builtin_sub_overflow(a, b, o);
        },
        [](double a, double b, double* o) { return *o = a - b, true; }};
  }
  if (op == "Mul") {
    return BinaryOp{
        [](int64_t a, int64_t b, int64_t* o) {
          return !__builtin_mul_overflow(a, b, o);
        },
        [](double a, double b, double* o) { return *o = a * b, true; }};
  }
  if (op == "Div") {
    return BinaryOp{
        [](int64_t a, int64_t b, int64_t* o) {
          if (b == 0 || (a == INT64_MIN && b == -1)) return false;
          *o = a / b;
          return true;
        },
        // No inf or NaN from a division by zero either: no value.
        [](double a, double b, double* o) { return *o = a / b, b != 0; }};
  }
  if (op == "Mod") {
    const bool fmod = AttrInt(node, "fmod", 0) != 0;
    return BinaryOp{[fmod](int64_t a, int64_t b, int64_t* o) {
                      return IntMod(a, b, fmod, o);
                    },
                    [fmod](double a, double b, double* o) {
                      double r = std::fmod(a, b);
                      if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
                      *o = r;
                      return b != 0;
                    }};
  }
  if (op == "Pow") {
    return BinaryOp{IntPow, [](double a, double b, double* o) {
                      return *o = std::pow(a, b), true;
                    }};
  }
  return std::nullopt;
}

// Max and Min (and their variadic forms' pairs).
std::optional<BinaryOp> MinMaxOp(std::string_view op) {
  if (op == "Max") {
    return BinaryOp{[](int64_t a, int64_t b, int64_t* o) {
                      return *o = std::max(a, b), true;
                    },
                    [](double a, double b, double* o) {
                      return *o = std::max(a, b), true;
                    }};
  }
  if (op == "Min") {
    return BinaryOp{[](int64_t a, int64_t b, int64_t* o) {
                      return *o = std::min(a, b), true;
                    },
                    [](double a, double b, double* o) {
                      return *o = std::min(a, b), true;
                    }};
  }
  return std::nullopt;
}

// The comparisons and logic ops: BOOL results.
std::optional<BinaryOp> ComparisonOp(std::string_view op) {
  auto cmp = [](auto f) {
    return BinaryOp{[f](int64_t a, int64_t b, int64_t* o) {
                      *o = f(a, b);
                      return true;
                    },
                    [f](double a, double b, double* o) {
                      *o = f(a, b);
                      return true;
                    },
                    true};
  };
  if (op == "Equal") return cmp([](auto a, auto b) { return a == b; });
  if (op == "Less") return cmp([](auto a, auto b) { return a < b; });
  if (op == "Greater") return cmp([](auto a, auto b) { return a > b; });
  if (op == "LessOrEqual") return cmp([](auto a, auto b) { return a <= b; });
  if (op == "GreaterOrEqual") {
    return cmp([](auto a, auto b) { return a >= b; });
  }
  if (op == "And") return cmp([](auto a, auto b) { return a != 0 && b != 0; });
  if (op == "Or") return cmp([](auto a, auto b) { return a != 0 || b != 0; });
  if (op == "Xor")
    return cmp([](auto a, auto b) { return (a != 0) != (b != 0); });
  return std::nullopt;
}

// The op `op` (an op type; `node` gives Mod's fmod), or nullopt.
std::optional<BinaryOp> FindBinaryOp(std::string_view op,
                                     const onnx::NodeProto& node) {
  if (std::optional<BinaryOp> a = ArithmeticOp(op, node)) return a;
  if (std::optional<BinaryOp> m = MinMaxOp(op)) return m;
  return ComparisonOp(op);
}

// Applies `op` to `a` and `b` with numpy broadcasting. The result has a's
// element type (BOOL for comparisons); an integer and a float operand are
// combined as floats. Pow's result always has the base's type (the spec's
// T, as onnxruntime: Pow(int64 3, float 0.5) is int64 1, the float result
// truncated); for the other ops, whose spec wants one type, the float one.
std::optional<ShapeValue> Binary(const BinaryOp& op, const ShapeValue& a,
                                 const ShapeValue& b, bool base_type) {
  auto dims = BroadcastDims(a.dims, b.dims);
  if (!dims) return std::nullopt;
  const bool floats = a.is_float() || b.is_float();
  int32_t type = op.to_bool ? TensorProto::BOOL : a.elem_type;
  if (!op.to_bool && !base_type && floats && !a.is_float()) {
    type = b.elem_type;
  }
  std::optional<ShapeValue> out = MakeValue(type, *dims);
  if (!out) return std::nullopt;
  const std::vector<int64_t> ia = BroadcastIndices(a.dims, *dims);
  const std::vector<int64_t> ib = BroadcastIndices(b.dims, *dims);
  for (size_t k = 0; k < ia.size(); ++k) {
    if (floats) {
      double r = 0;
      if (!op.on_floats(a.AsDouble(ia[k]), b.AsDouble(ib[k]), &r)) {
        return std::nullopt;
      }
      if (out->is_float()) {
        out->floats[k] = r;
      } else if (op.to_bool) {
        out->ints[k] = r != 0;
      } else {
        // Truncated as Cast does; NaN or beyond int64: no value.
        std::optional<int64_t> t = TruncToInt64(r);
        if (!t) return std::nullopt;
        out->ints[k] = *t;
      }
    } else if (!op.on_ints(a.ints[ia[k]], b.ints[ib[k]], &out->ints[k])) {
      return std::nullopt;
    }
  }
  Normalize(&*out);
  return out;
}

double RoundHalfToEven(double x) {
  const double r = std::round(x);
  if (std::fabs(x - std::trunc(x)) == 0.5) return 2.0 * std::round(x / 2.0);
  return r;
}

}  // namespace

// Add, Sub, ..., comparisons, logic; Min/Max/Sum/Mean fold over their inputs.
Outputs EvalBinary(const EvalCtx& c) {
  const bool mean = c.node.op_type() == "Mean";
  const std::optional<BinaryOp> f =
      FindBinaryOp(mean ? "Sum" : c.node.op_type(), c.node);
  if (!f || c.inputs.empty() || c.value(0) == nullptr) return {};
  const bool base_type = c.node.op_type() == "Pow";
  std::optional<ShapeValue> acc = *c.value(0);
  for (size_t i = 1; i < c.inputs.size() && acc; ++i) {
    if (c.value(i) == nullptr) return {};
    acc = Binary(*f, *acc, *c.value(i), base_type);
  }
  if (acc && mean) {
    if (!acc->is_float()) return {};
    for (double& x : acc->floats) x /= static_cast<double>(c.inputs.size());
    Normalize(&*acc);
  }
  return {acc};
}

Outputs EvalUnary(const EvalCtx& c) {
  const ShapeValue* in = c.value(0);
  if (in == nullptr) return {};
  const std::string& op = c.node.op_type();
  ShapeValue out = *in;
  if (out.is_float()) {
    for (double& x : out.floats) {
      if (op == "Neg") x = -x;
      if (op == "Abs") x = std::fabs(x);
      if (op == "Sign") x = x > 0 ? 1 : (x < 0 ? -1 : 0);
      if (op == "Floor") x = std::floor(x);
      if (op == "Ceil") x = std::ceil(x);
      if (op == "Round") x = RoundHalfToEven(x);
      if (op == "Sqrt") x = std::sqrt(x);
      if (op == "Reciprocal") {
        if (x == 0) return {};  // a division by zero: no inf
        x = 1.0 / x;
      }
      if (op == "Relu") x = std::max(x, 0.0);
      if (op == "Not") return {};
    }
  } else {
    for (int64_t& x : out.ints) {
      if ((op == "Neg" || op == "Abs") && x == INT64_MIN) return {};
      if (op == "Neg") x = -x;
      if (op == "Abs") x = x < 0 ? -x : x;
      if (op == "Sign") x = x > 0 ? 1 : (x < 0 ? -1 : 0);
      if (op == "Relu") x = std::max<int64_t>(x, 0);
      if (op == "Not") x = x == 0;
      if (op == "Sqrt" || op == "Reciprocal") return {};
      // Floor, Ceil, Round: integers stay.
    }
  }
  Normalize(&out);
  return {out};
}

Outputs EvalCast(const EvalCtx& c) {
  const ShapeValue* in = c.value(0);
  const int32_t to = static_cast<int32_t>(AttrInt(c.node, "to", 0));
  if (in == nullptr || to == 0 || to == TensorProto::STRING) return {};
  std::optional<ShapeValue> out = MakeValue(to, in->dims);
  if (!out) return {};
  for (int64_t k = 0; k < in->NumElements(); ++k) {
    if (out->is_float()) {
      out->floats[k] = in->AsDouble(k);
    } else if (!in->is_float()) {
      out->ints[k] = in->ints[k];
    } else if (to == TensorProto::BOOL) {
      out->ints[k] = in->floats[k] != 0;
    } else {
      std::optional<int64_t> x = TruncToInt64(in->floats[k]);
      if (!x) return {};
      out->ints[k] = *x;
    }
  }
  Normalize(&*out);
  return {out};
}

Outputs EvalIdentity(const EvalCtx& c) {
  if (c.value(0) == nullptr) return {};
  return {*c.value(0)};
}

Outputs EvalConstant(const EvalCtx& c) { return {ConstantNodeValue(c.node)}; }

Outputs EvalWhere(const EvalCtx& c) {
  const ShapeValue* cond = c.value(0);
  const ShapeValue* x = c.value(1);
  const ShapeValue* y = c.value(2);
  if (cond == nullptr || x == nullptr || y == nullptr ||
      x->is_float() != y->is_float()) {
    return {};
  }
  auto xy = BroadcastDims(x->dims, y->dims);
  if (!xy) return {};
  auto dims = BroadcastDims(cond->dims, *xy);
  if (!dims) return {};
  std::optional<ShapeValue> out = MakeValue(x->elem_type, *dims);
  if (!out) return {};
  const auto ic = BroadcastIndices(cond->dims, *dims);
  const auto ix = BroadcastIndices(x->dims, *dims);
  const auto iy = BroadcastIndices(y->dims, *dims);
  for (size_t k = 0; k < ic.size(); ++k) {
    const bool take_x = cond->AsDouble(ic[k]) != 0;
    CopyElement(take_x ? *x : *y, take_x ? ix[k] : iy[k], &*out, k);
  }
  return {out};
}

}  // namespace autoshard::values_internal
