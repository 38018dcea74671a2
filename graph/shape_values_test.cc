#include "graph/shape_values.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

using onnx::TensorProto;
using ::testing::ElementsAre;

ShapeValue Ints(std::vector<int64_t> dims, std::vector<int64_t> data,
                int32_t type = TensorProto::INT64) {
  ShapeValue v;
  v.elem_type = type;
  v.dims = std::move(dims);
  v.ints = std::move(data);
  return v;
}

ShapeValue Int(int64_t x) { return Ints({}, {x}); }
ShapeValue Vec(std::vector<int64_t> data) {
  const int64_t n = static_cast<int64_t>(data.size());
  return Ints({n}, std::move(data));
}

ShapeValue Floats(std::vector<int64_t> dims, std::vector<double> data) {
  ShapeValue v;
  v.elem_type = TensorProto::FLOAT;
  v.dims = std::move(dims);
  v.floats = std::move(data);
  return v;
}

// The single node of `node_text` (ONNX text, inputs named as the test
// likes), evaluated at `opset` on `inputs` (nullptr: unknown or absent).
// Returns its outputs.
std::vector<std::optional<ShapeValue>> EvalAll(
    const std::string& node_text, std::vector<const ShapeValue*> inputs,
    int64_t opset = 13, const TensorInfo* info0 = nullptr) {
  const std::string text =
      "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
      "]>\ng (float[1] x) => (float[1] y) {\n" + node_text + "\n}";
  onnx::ModelProto m = testing::ParseModelText(text);
  if (m.graph().node_size() != 1) return {};
  std::vector<EvalInput> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in.push_back({inputs[i], i == 0 ? info0 : nullptr});
  }
  return EvaluateNode(m.graph().node(0), opset, in);
}

std::optional<ShapeValue> Eval(const std::string& node_text,
                               std::vector<const ShapeValue*> inputs,
                               int64_t opset = 13) {
  auto outs = EvalAll(node_text, std::move(inputs), opset);
  return outs.empty() ? std::nullopt : outs[0];
}

// The dims and the integer data of `v`, for one EXPECT.
std::vector<int64_t> DimsOf(const std::optional<ShapeValue>& v) {
  return v ? v->dims : std::vector<int64_t>{-99};
}
std::vector<int64_t> IntsOf(const std::optional<ShapeValue>& v) {
  return v ? v->ints : std::vector<int64_t>{-99};
}
std::vector<double> FloatsOf(const std::optional<ShapeValue>& v) {
  return v ? v->floats : std::vector<double>{-99};
}

TEST(ShapeValuesTest, ShapeAndSizeNeedOnlyTheInputShape) {
  TensorInfo x{TensorProto::FLOAT, true, {2, 3, 5}};
  auto shape = EvalAll("y = Shape(x)", {nullptr}, 13, &x);
  EXPECT_THAT(IntsOf(shape[0]), ElementsAre(2, 3, 5));
  EXPECT_THAT(DimsOf(shape[0]), ElementsAre(3));
  // Opset 15's start/end: dims [1, -1) = [3].
  auto part = EvalAll("y = Shape <start = 1, end = -1> (x)", {nullptr}, 15, &x);
  EXPECT_THAT(IntsOf(part[0]), ElementsAre(3));
  auto size = EvalAll("y = Size(x)", {nullptr}, 13, &x);
  EXPECT_THAT(IntsOf(size[0]), ElementsAre(30));  // 2 x 3 x 5
  // An unknown dim: no value (never a guess).
  TensorInfo unknown{TensorProto::FLOAT, true, {2, -1}};
  EXPECT_FALSE(EvalAll("y = Shape(x)", {nullptr}, 13, &unknown)[0]);
}

TEST(ShapeValuesTest, GatherSliceConcat) {
  const ShapeValue shape = Vec({2, 3, 5});
  const ShapeValue one = Int(1);
  auto g = Eval("y = Gather <axis = 0> (s, i)", {&shape, &one});
  EXPECT_THAT(DimsOf(g), ElementsAre());  // a scalar index gives a scalar
  EXPECT_THAT(IntsOf(g), ElementsAre(3));
  const ShapeValue idx = Vec({-1, 0});
  EXPECT_THAT(IntsOf(Eval("y = Gather(s, i)", {&shape, &idx})),
              ElementsAre(5, 2));
  // Axis 1 of [[1,2,3],[4,5,6]] at [2, 0] -> [[3,1],[6,4]].
  const ShapeValue m = Ints({2, 3}, {1, 2, 3, 4, 5, 6});
  const ShapeValue cols = Vec({2, 0});
  EXPECT_THAT(IntsOf(Eval("y = Gather <axis = 1> (s, i)", {&m, &cols})),
              ElementsAre(3, 1, 6, 4));

  const ShapeValue ten = Vec({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  const ShapeValue s2 = Vec({2}), em1 = Vec({-1}), ax0 = Vec({0}),
                   st3 = Vec({3});
  // [2, -1) step 3: 2, 5, 8.
  EXPECT_THAT(
      IntsOf(Eval("y = Slice(d, s, e, a, t)", {&ten, &s2, &em1, &ax0, &st3})),
      ElementsAre(2, 5, 8));
  // Backwards from the end to before the start, step -2: 9, 7, 5, 3, 1.
  const ShapeValue last = Vec({-1}), before = Vec({INT64_MIN}),
                   back2 = Vec({-2});
  EXPECT_THAT(IntsOf(Eval("y = Slice(d, s, e, a, t)",
                          {&ten, &last, &before, &ax0, &back2})),
              ElementsAre(9, 7, 5, 3, 1));
  // Opset 9 takes starts/ends as attributes; INT64_MAX means "to the end".
  EXPECT_THAT(
      IntsOf(Eval("y = Slice <starts = [7], ends = [9223372036854775807]> (d)",
                  {&ten}, 9)),
      ElementsAre(7, 8, 9));

  const ShapeValue a = Ints({1, 2}, {1, 2}), b = Ints({1, 1}, {3});
  auto c = Eval("y = Concat <axis = -1> (a, b)", {&a, &b});
  EXPECT_THAT(DimsOf(c), ElementsAre(1, 3));
  EXPECT_THAT(IntsOf(c), ElementsAre(1, 2, 3));
}

TEST(ShapeValuesTest, UnsqueezeSqueezeReshapeFlattenTranspose) {
  const ShapeValue s = Int(7);
  const ShapeValue ax0 = Vec({0});
  EXPECT_THAT(DimsOf(Eval("y = Unsqueeze(x, a)", {&s, &ax0})), ElementsAre(1));
  // Opset 11: axes attribute; [3] -> [1, 3, 1].
  const ShapeValue v = Vec({4, 5, 6});
  EXPECT_THAT(DimsOf(Eval("y = Unsqueeze <axes = [0, -1]> (x)", {&v}, 11)),
              ElementsAre(1, 3, 1));
  const ShapeValue col = Ints({1, 3, 1}, {4, 5, 6});
  EXPECT_THAT(DimsOf(Eval("y = Squeeze(x)", {&col})), ElementsAre(3));
  const ShapeValue ax2 = Vec({2});
  EXPECT_THAT(DimsOf(Eval("y = Squeeze(x, a)", {&col, &ax2})),
              ElementsAre(1, 3));
  const ShapeValue ax1 = Vec({1});
  EXPECT_FALSE(Eval("y = Squeeze(x, a)", {&col, &ax1}));  // dim 3 != 1

  const ShapeValue six = Ints({2, 3}, {1, 2, 3, 4, 5, 6});
  // 0 copies dim 0 (2); -1 is 6 / (2 x 1) = 3.
  const ShapeValue target = Vec({0, 1, -1});
  auto r = Eval("y = Reshape(x, s)", {&six, &target});
  EXPECT_THAT(DimsOf(r), ElementsAre(2, 1, 3));
  EXPECT_THAT(IntsOf(r), ElementsAre(1, 2, 3, 4, 5, 6));
  const ShapeValue cube = Ints({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(DimsOf(Eval("y = Flatten <axis = 2> (x)", {&cube})),
              ElementsAre(2, 3));
  auto t = Eval("y = Transpose(x)", {&six});
  EXPECT_THAT(DimsOf(t), ElementsAre(3, 2));
  EXPECT_THAT(IntsOf(t), ElementsAre(1, 4, 2, 5, 3, 6));
}

TEST(ShapeValuesTest, ArithmeticFollowsTheSpec) {
  const ShapeValue a = Vec({7, -7, 6}), b = Int(2), m3 = Int(3);
  EXPECT_THAT(IntsOf(Eval("y = Add(a, b)", {&a, &b})), ElementsAre(9, -5, 8));
  EXPECT_THAT(IntsOf(Eval("y = Sub(a, b)", {&a, &b})), ElementsAre(5, -9, 4));
  EXPECT_THAT(IntsOf(Eval("y = Mul(a, b)", {&a, &b})),
              ElementsAre(14, -14, 12));
  // Integer Div truncates toward zero: -7 / 2 = -3.
  EXPECT_THAT(IntsOf(Eval("y = Div(a, b)", {&a, &b})), ElementsAre(3, -3, 3));
  // Mod takes the divisor's sign (-7 mod 3 = 2); fmod=1 the dividend's (-1).
  EXPECT_THAT(IntsOf(Eval("y = Mod(a, b)", {&a, &m3})), ElementsAre(1, 2, 0));
  EXPECT_THAT(IntsOf(Eval("y = Mod <fmod = 1> (a, b)", {&a, &m3})),
              ElementsAre(1, -1, 0));
  EXPECT_THAT(IntsOf(Eval("y = Neg(a)", {&a})), ElementsAre(-7, 7, -6));
  // Pow: 2^3, (-1)^3, 3^0.
  const ShapeValue bases = Vec({2, -1, 3}), exps = Vec({3, 3, 0});
  EXPECT_THAT(IntsOf(Eval("y = Pow(a, b)", {&bases, &exps})),
              ElementsAre(8, -1, 1));
  EXPECT_THAT(IntsOf(Eval("y = Max(a, b, c)", {&a, &b, &m3})),
              ElementsAre(7, 3, 6));
  EXPECT_THAT(IntsOf(Eval("y = Min(a, b)", {&a, &b})), ElementsAre(2, -7, 2));
  // Broadcast: [2,1] + [3] -> [2,3].
  const ShapeValue c = Ints({2, 1}, {10, 20}), r = Vec({1, 2, 3});
  auto sum = Eval("y = Add(a, b)", {&c, &r});
  EXPECT_THAT(DimsOf(sum), ElementsAre(2, 3));
  EXPECT_THAT(IntsOf(sum), ElementsAre(11, 12, 13, 21, 22, 23));
  // No value rather than a wrong one.
  const ShapeValue zero = Int(0), big = Int(INT64_MAX);
  EXPECT_FALSE(Eval("y = Div(a, b)", {&a, &zero}));
  EXPECT_FALSE(Eval("y = Mul(a, b)", {&big, &b}));
}

TEST(ShapeValuesTest, FloatsRoundLikeFloat32AndCastTruncates) {
  // 320 / 3 in float32, times 3, floored: float32 gives 320 (not 319).
  const ShapeValue n = Floats({}, {320}), three = Floats({}, {3});
  auto q = Eval("y = Div(a, b)", {&n, &three});
  ASSERT_TRUE(q);
  EXPECT_EQ(q->floats[0], static_cast<double>(320.0f / 3.0f));
  const ShapeValue f = Floats({4}, {2.7, -2.7, 2.5, 3.5});
  EXPECT_THAT(IntsOf(Eval("y = Cast <to = 7> (x)", {&f})),
              ElementsAre(2, -2, 2, 3));
  EXPECT_THAT(FloatsOf(Eval("y = Floor(x)", {&f})), ElementsAre(2, -3, 2, 3));
  EXPECT_THAT(FloatsOf(Eval("y = Ceil(x)", {&f})), ElementsAre(3, -2, 3, 4));
  // Round is half to even: 2.5 -> 2, 3.5 -> 4.
  EXPECT_THAT(FloatsOf(Eval("y = Round(x)", {&f})), ElementsAre(3, -3, 2, 4));
  const ShapeValue i = Vec({3, 4});
  auto as_float = Eval("y = Cast <to = 1> (x)", {&i});
  EXPECT_THAT(FloatsOf(as_float), ElementsAre(3, 4));
  EXPECT_EQ(as_float->elem_type, TensorProto::FLOAT);
  // int32 wraps as int32 does.
  const ShapeValue large = Int(int64_t{1} << 32 | 5);
  EXPECT_THAT(IntsOf(Eval("y = Cast <to = 6> (x)", {&large})), ElementsAre(5));
}

TEST(ShapeValuesTest, ComparisonsLogicAndWhere) {
  const ShapeValue a = Vec({1, 5, 3}), b = Int(3);
  auto eq = Eval("y = Equal(a, b)", {&a, &b});
  EXPECT_EQ(eq->elem_type, TensorProto::BOOL);
  EXPECT_THAT(IntsOf(eq), ElementsAre(0, 0, 1));
  EXPECT_THAT(IntsOf(Eval("y = Less(a, b)", {&a, &b})), ElementsAre(1, 0, 0));
  EXPECT_THAT(IntsOf(Eval("y = Greater(a, b)", {&a, &b})),
              ElementsAre(0, 1, 0));
  const ShapeValue t = Ints({3}, {1, 0, 1}, TensorProto::BOOL);
  const ShapeValue u = Ints({3}, {1, 1, 0}, TensorProto::BOOL);
  EXPECT_THAT(IntsOf(Eval("y = Not(a)", {&t})), ElementsAre(0, 1, 0));
  EXPECT_THAT(IntsOf(Eval("y = And(a, b)", {&t, &u})), ElementsAre(1, 0, 0));
  EXPECT_THAT(IntsOf(Eval("y = Or(a, b)", {&t, &u})), ElementsAre(1, 1, 1));
  // Where(a == 3, 1, a): torch's "replace a dim by 1" idiom.
  const ShapeValue one = Int(1);
  EXPECT_THAT(IntsOf(Eval("y = Where(c, x, z)", {&*eq, &one, &a})),
              ElementsAre(1, 5, 1));
}

TEST(ShapeValuesTest, RangeConstantOfShapeExpandTile) {
  const ShapeValue s0 = Int(0), s10 = Int(10), d3 = Int(3), dm4 = Int(-4);
  EXPECT_THAT(IntsOf(Eval("y = Range(s, l, d)", {&s0, &s10, &d3})),
              ElementsAre(0, 3, 6, 9));  // ceil(10 / 3) = 4 elements
  EXPECT_THAT(IntsOf(Eval("y = Range(s, l, d)", {&s10, &s0, &dm4})),
              ElementsAre(10, 6, 2));
  EXPECT_THAT(DimsOf(Eval("y = Range(s, l, d)", {&s10, &s0, &d3})),
              ElementsAre(0));  // empty
  const ShapeValue shape = Vec({2, 3});
  auto filled =
      Eval("y = ConstantOfShape <value = int64[1] {7}> (s)", {&shape});
  EXPECT_THAT(DimsOf(filled), ElementsAre(2, 3));
  EXPECT_THAT(IntsOf(filled), ElementsAre(7, 7, 7, 7, 7, 7));
  // Without `value`: float zeros.
  EXPECT_EQ(Eval("y = ConstantOfShape(s)", {&shape})->elem_type,
            TensorProto::FLOAT);
  const ShapeValue col = Ints({2, 1}, {1, 2});
  auto e = Eval("y = Expand(x, s)", {&col, &shape});
  EXPECT_THAT(DimsOf(e), ElementsAre(2, 3));
  EXPECT_THAT(IntsOf(e), ElementsAre(1, 1, 1, 2, 2, 2));
  const ShapeValue row = Ints({1, 2}, {1, 2}), reps = Vec({2, 2});
  auto t = Eval("y = Tile(x, r)", {&row, &reps});
  EXPECT_THAT(DimsOf(t), ElementsAre(2, 4));
  EXPECT_THAT(IntsOf(t), ElementsAre(1, 2, 1, 2, 1, 2, 1, 2));
  // Bounded: 100 x 100 elements are never materialised.
  const ShapeValue huge = Vec({100, 100});
  EXPECT_FALSE(Eval("y = ConstantOfShape(s)", {&huge}));
}

TEST(ShapeValuesTest, IdentityConstantReductionsNonZeroSplit) {
  const ShapeValue v = Vec({2, 3, 4});
  EXPECT_THAT(IntsOf(Eval("y = Identity(x)", {&v})), ElementsAre(2, 3, 4));
  EXPECT_THAT(IntsOf(Eval("y = Constant <value_ints = [5, 6]> ()", {})),
              ElementsAre(5, 6));
  EXPECT_THAT(IntsOf(Eval("y = ReduceProd <keepdims = 0> (x)", {&v})),
              ElementsAre(24));
  // Opset 13 ReduceSum takes axes as an input; keepdims defaults to 1.
  const ShapeValue m = Ints({2, 3}, {1, 2, 3, 4, 5, 6}), ax1 = Vec({1});
  auto rs = Eval("y = ReduceSum(x, a)", {&m, &ax1});
  EXPECT_THAT(DimsOf(rs), ElementsAre(2, 1));
  EXPECT_THAT(IntsOf(rs), ElementsAre(6, 15));
  EXPECT_THAT(
      IntsOf(Eval("y = ReduceMin <axes = [0], keepdims = 0> (x)", {&m})),
      ElementsAre(1, 2, 3));
  const ShapeValue mask = Ints({2, 2}, {0, 1, 1, 0}, TensorProto::BOOL);
  auto nz = Eval("y = NonZero(x)", {&mask});
  EXPECT_THAT(DimsOf(nz), ElementsAre(2, 2));
  EXPECT_THAT(IntsOf(nz), ElementsAre(0, 1, 1, 0));  // rows, then columns
  const ShapeValue six = Vec({1, 2, 3, 4, 5, 6}), parts = Vec({2, 4});
  auto split = EvalAll("a, b = Split(x, s)", {&six, &parts});
  ASSERT_EQ(split.size(), 2u);
  EXPECT_THAT(IntsOf(split[0]), ElementsAre(1, 2));
  EXPECT_THAT(IntsOf(split[1]), ElementsAre(3, 4, 5, 6));
}

TEST(ShapeValuesTest, RemainingElementWiseOpsAndReductions) {
  const ShapeValue a = Vec({-4, 0, 9}), b = Vec({1, 0, 2});
  EXPECT_THAT(IntsOf(Eval("y = Sum(a, b, c)", {&a, &b, &b})),
              ElementsAre(-2, 0, 13));
  const ShapeValue f = Floats({2}, {1, 4}), g = Floats({2}, {3, 8});
  EXPECT_THAT(FloatsOf(Eval("y = Mean(a, b)", {&f, &g})), ElementsAre(2, 6));
  EXPECT_THAT(IntsOf(Eval("y = Abs(a)", {&a})), ElementsAre(4, 0, 9));
  EXPECT_THAT(IntsOf(Eval("y = Sign(a)", {&a})), ElementsAre(-1, 0, 1));
  EXPECT_THAT(IntsOf(Eval("y = Relu(a)", {&a})), ElementsAre(0, 0, 9));
  EXPECT_THAT(FloatsOf(Eval("y = Sqrt(a)", {&f})), ElementsAre(1, 2));
  EXPECT_THAT(FloatsOf(Eval("y = Reciprocal(a)", {&f})), ElementsAre(1, 0.25));
  EXPECT_THAT(IntsOf(Eval("y = LessOrEqual(a, b)", {&a, &b})),
              ElementsAre(1, 1, 0));
  EXPECT_THAT(IntsOf(Eval("y = GreaterOrEqual(a, b)", {&a, &b})),
              ElementsAre(0, 1, 1));
  const ShapeValue t = Ints({2}, {1, 1}, TensorProto::BOOL);
  const ShapeValue u = Ints({2}, {1, 0}, TensorProto::BOOL);
  EXPECT_THAT(IntsOf(Eval("y = Xor(a, b)", {&t, &u})), ElementsAre(0, 1));
  const ShapeValue m = Ints({2, 2}, {3, 8, 5, 1});
  EXPECT_THAT(
      IntsOf(Eval("y = ReduceMax <axes = [1], keepdims = 0> (x)", {&m})),
      ElementsAre(8, 5));
  // Integer ReduceMean truncates: (3 + 5) / 2 = 4, (8 + 1) / 2 = 4.
  EXPECT_THAT(
      IntsOf(Eval("y = ReduceMean <axes = [0], keepdims = 0> (x)", {&m})),
      ElementsAre(4, 4));
}

// A 0 dim makes a tensor empty; sizes come from products of dims, never
// from dividing the element count (0) by them.
TEST(ShapeValuesTest, EmptyTensorsEvaluateWithoutDividingByZero) {
  // ConstantOfShape([2, 0]) -> Gather(axis 0, [0]): one row of 0 elements.
  const ShapeValue shape = Vec({2, 0});
  auto empty = Eval("y = ConstantOfShape <value = int64[1] {7}> (s)", {&shape});
  EXPECT_THAT(DimsOf(empty), ElementsAre(2, 0));
  const ShapeValue zero = Vec({0});
  auto row = Eval("y = Gather <axis = 0> (x, i)", {&*empty, &zero});
  EXPECT_THAT(DimsOf(row), ElementsAre(1, 0));
  EXPECT_THAT(IntsOf(row), ElementsAre());
  // Index 2 is out of range for dim 2, even with nothing to copy.
  const ShapeValue two = Vec({2});
  EXPECT_FALSE(Eval("y = Gather <axis = 0> (x, i)", {&*empty, &two}));
  // Nothing on axis 1 can be gathered: index 0 is out of range for dim 0.
  EXPECT_FALSE(Eval("y = Gather <axis = 1> (x, i)", {&*empty, &zero}));

  // Flatten [0, 3] at axis 1 is [0, 3] (0 x 3 elements), not [0, 0].
  const ShapeValue none3 = Ints({0, 3}, {});
  EXPECT_THAT(DimsOf(Eval("y = Flatten <axis = 1> (x)", {&none3})),
              ElementsAre(0, 3));
  // Tile [2, 0] by [2, 3]: [4, 0].
  const ShapeValue reps = Vec({2, 3});
  EXPECT_THAT(DimsOf(Eval("y = Tile(x, r)", {&*empty, &reps})),
              ElementsAre(4, 0));
  // Reshape [2, 0] to [3, 0] (0 copies the input's dim 1, which is 0).
  const ShapeValue target = Vec({3, 0});
  EXPECT_THAT(DimsOf(Eval("y = Reshape(x, s)", {&*empty, &target})),
              ElementsAre(3, 0));
  EXPECT_THAT(DimsOf(Eval("y = Transpose(x)", {&*empty})), ElementsAre(0, 2));
  // A backwards slice of a 0-long axis is empty.
  const ShapeValue nothing = Ints({0}, {});
  const ShapeValue last = Vec({-1}), before = Vec({INT64_MIN}), ax0 = Vec({0}),
                   back = Vec({-1});
  EXPECT_THAT(DimsOf(Eval("y = Slice(d, s, e, a, t)",
                          {&nothing, &last, &before, &ax0, &back})),
              ElementsAre(0));
  // NonZero of an empty [2, 0]: [2, 0] (rank 2, no hit).
  EXPECT_THAT(DimsOf(Eval("y = NonZero(x)", {&*empty})), ElementsAre(2, 0));
  // Split of [0] in two parts of 0.
  const ShapeValue parts = Vec({0, 0});
  auto split = EvalAll("a, b = Split(x, s)", {&nothing, &parts});
  ASSERT_EQ(split.size(), 2u);
  EXPECT_THAT(DimsOf(split[0]), ElementsAre(0));
  EXPECT_THAT(DimsOf(split[1]), ElementsAre(0));

  // Reducing over the 0 dim of [2, 0]: each of the 2 sums adds nothing (0),
  // each product multiplies nothing (1); min, max and mean of nothing are
  // undefined: no value.
  const ShapeValue ax1 = Vec({1});
  auto sum = Eval("y = ReduceSum(x, a)", {&*empty, &ax1});
  EXPECT_THAT(DimsOf(sum), ElementsAre(2, 1));
  EXPECT_THAT(IntsOf(sum), ElementsAre(0, 0));
  EXPECT_THAT(
      IntsOf(Eval("y = ReduceProd <axes = [1], keepdims = 0> (x)", {&*empty})),
      ElementsAre(1, 1));
  EXPECT_FALSE(Eval("y = ReduceMax <axes = [1]> (x)", {&*empty}));
  EXPECT_FALSE(Eval("y = ReduceMean <axes = [1]> (x)", {&*empty}));
  // Reducing over the 2 keeps the 0: an empty [0] (keepdims 0).
  EXPECT_THAT(
      DimsOf(Eval("y = ReduceMax <axes = [0], keepdims = 0> (x)", {&*empty})),
      ElementsAre(0));

  // An empty tensor whose other dims multiply past 4,096 is not held, so no
  // product of its dims can overflow.
  const ShapeValue wide = Vec({0, 5000});
  EXPECT_FALSE(Eval("y = ConstantOfShape(s)", {&wide}));
  const ShapeValue held = Ints({0, 5000}, {});
  EXPECT_FALSE(Eval("y = Identity(x)", {&held}));
  // A value whose data does not match its dims counts as unknown.
  const ShapeValue short_data = Ints({3}, {1, 2});
  EXPECT_FALSE(Eval("y = Identity(x)", {&short_data}));
}

TEST(ShapeValuesTest, DivisionByZeroGivesNoValue) {
  const ShapeValue seven = Int(7), zero = Int(0), minus1 = Int(-1),
                   min = Int(INT64_MIN);
  EXPECT_FALSE(Eval("y = Div(a, b)", {&seven, &zero}));
  EXPECT_FALSE(Eval("y = Mod(a, b)", {&seven, &zero}));
  EXPECT_FALSE(Eval("y = Mod <fmod = 1> (a, b)", {&seven, &zero}));
  // INT64_MIN / -1 = 2^63 does not fit (x86 traps on it).
  EXPECT_FALSE(Eval("y = Div(a, b)", {&min, &minus1}));
  EXPECT_FALSE(Eval("y = Mod(a, b)", {&min, &minus1}));
  // Floats too: no inf or NaN.
  const ShapeValue f1 = Floats({}, {1}), f0 = Floats({}, {0});
  EXPECT_FALSE(Eval("y = Div(a, b)", {&f1, &f0}));
  EXPECT_FALSE(Eval("y = Mod <fmod = 1> (a, b)", {&f1, &f0}));
  EXPECT_FALSE(Eval("y = Reciprocal(x)", {&f0}));
  // 1 / 4 is fine.
  const ShapeValue f4 = Floats({}, {4});
  EXPECT_THAT(FloatsOf(Eval("y = Div(a, b)", {&f1, &f4})), ElementsAre(0.25));
}

// Absurd sizes, steps, repeats and counts give no value (or the exact small
// result), never a signed overflow.
TEST(ShapeValuesTest, HugeValuesGiveNoValueNotOverflow) {
  const ShapeValue six = Ints({2, 3}, {1, 2, 3, 4, 5, 6});
  // 2^62 x 4 overflows while multiplying the known dims.
  const ShapeValue huge_shape = Vec({int64_t{1} << 62, 4, -1});
  EXPECT_FALSE(Eval("y = Reshape(x, s)", {&six, &huge_shape}));
  // Tile: dim 2 x INT64_MAX repeats overflows.
  const ShapeValue huge_reps = Vec({INT64_MAX, 1});
  EXPECT_FALSE(Eval("y = Tile(x, r)", {&six, &huge_reps}));

  // Slice [1, 10) of 0..9 with step INT64_MAX: just element 1; backwards
  // from the last with step INT64_MIN: just element 9.
  const ShapeValue ten = Vec({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  const ShapeValue s1 = Vec({1}), e10 = Vec({10}), ax0 = Vec({0}),
                   big_step = Vec({INT64_MAX});
  EXPECT_THAT(IntsOf(Eval("y = Slice(d, s, e, a, t)",
                          {&ten, &s1, &e10, &ax0, &big_step})),
              ElementsAre(1));
  const ShapeValue last = Vec({-1}), before = Vec({INT64_MIN}),
                   min_step = Vec({INT64_MIN});
  EXPECT_THAT(IntsOf(Eval("y = Slice(d, s, e, a, t)",
                          {&ten, &last, &before, &ax0, &min_step})),
              ElementsAre(9));

  // Range: 0 down to INT64_MIN by -1 is 2^63 elements (and INT64_MIN / -1
  // overflows): no value. 0 to 10 by INT64_MAX: [0]. 5 to 0 by 2: empty.
  const ShapeValue i0 = Int(0), imin = Int(INT64_MIN), m1 = Int(-1),
                   i10 = Int(10), imax = Int(INT64_MAX), i5 = Int(5),
                   i2 = Int(2);
  EXPECT_FALSE(Eval("y = Range(s, l, d)", {&i0, &imin, &m1}));
  EXPECT_THAT(IntsOf(Eval("y = Range(s, l, d)", {&i0, &i10, &imax})),
              ElementsAre(0));
  EXPECT_THAT(DimsOf(Eval("y = Range(s, l, d)", {&i5, &i0, &i2})),
              ElementsAre(0));
  // Float counts of ±inf, NaN or -1e30: no value, or empty when negative.
  const ShapeValue f0 = Floats({}, {0}), f1 = Floats({}, {1}),
                   inf = Floats({}, {INFINITY}),
                   neg_inf = Floats({}, {-INFINITY}), nan = Floats({}, {NAN}),
                   far = Floats({}, {-1e30});
  EXPECT_FALSE(Eval("y = Range(s, l, d)", {&f0, &inf, &f1}));
  EXPECT_FALSE(Eval("y = Range(s, l, d)", {&f0, &f1, &nan}));
  EXPECT_THAT(DimsOf(Eval("y = Range(s, l, d)", {&f0, &neg_inf, &f1})),
              ElementsAre(0));
  EXPECT_THAT(DimsOf(Eval("y = Range(s, l, d)", {&f0, &far, &f1})),
              ElementsAre(0));
  // Start, limit and delta of different kinds: no value.
  EXPECT_FALSE(Eval("y = Range(s, l, d)", {&i0, &i10, &f1}));

  // Size of a [2^32, 2^32] tensor (2^64 elements) has no int64.
  TensorInfo vast{
      TensorProto::FLOAT, true, {int64_t{1} << 32, int64_t{1} << 32}};
  EXPECT_FALSE(EvalAll("y = Size(x)", {nullptr}, 13, &vast)[0]);
  // Transpose with a repeated axis is no permutation.
  EXPECT_FALSE(Eval("y = Transpose <perm = [0, 0]> (x)", {&six}));
  // Split sizes must cover the axis: 2 + 2 != 6, INT64_MAX + 5 overflows.
  const ShapeValue v6 = Vec({1, 2, 3, 4, 5, 6}), short_parts = Vec({2, 2}),
                   huge_parts = Vec({INT64_MAX, 5});
  EXPECT_FALSE(EvalAll("a, b = Split(x, s)", {&v6, &short_parts})[0]);
  EXPECT_FALSE(EvalAll("a, b = Split(x, s)", {&v6, &huge_parts})[0]);
  // Min/max compare integers exactly: 2^53 + 1 > 2^53 (equal as doubles,
  // which kept the first).
  const int64_t p53 = int64_t{1} << 53;
  const ShapeValue close = Vec({p53, p53 + 1});
  EXPECT_THAT(IntsOf(Eval("y = ReduceMax <keepdims = 0> (x)", {&close})),
              ElementsAre(p53 + 1));
}

// Pow's result has the base's type (the spec's T): onnxruntime computes in
// double and truncates to the base's integer type.
TEST(ShapeValuesTest, PowHasTheBaseType) {
  const ShapeValue bases = Vec({3, 2}), two = Floats({}, {2}),
                   half = Floats({}, {0.5});
  auto sq = Eval("y = Pow(a, b)", {&bases, &two});
  ASSERT_TRUE(sq);
  EXPECT_EQ(sq->elem_type, TensorProto::INT64);
  EXPECT_THAT(sq->ints, ElementsAre(9, 4));
  // sqrt(3) = 1.73 and sqrt(2) = 1.41 truncate to 1.
  EXPECT_THAT(IntsOf(Eval("y = Pow(a, b)", {&bases, &half})),
              ElementsAre(1, 1));
  const ShapeValue i32 = Ints({1}, {5}, TensorProto::INT32);
  auto p32 = Eval("y = Pow(a, b)", {&i32, &two});
  ASSERT_TRUE(p32);
  EXPECT_EQ(p32->elem_type, TensorProto::INT32);
  EXPECT_THAT(p32->ints, ElementsAre(25));
  // 2^100 fits no int64: no value.
  const ShapeValue hundred = Floats({}, {100});
  EXPECT_FALSE(Eval("y = Pow(a, b)", {&bases, &hundred}));
  // A float base keeps its type: 2.0^3 = 8.0.
  const ShapeValue fbase = Floats({}, {2}), three = Int(3);
  auto f = Eval("y = Pow(a, b)", {&fbase, &three});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->elem_type, TensorProto::FLOAT);
  EXPECT_THAT(f->floats, ElementsAre(8));
}

TEST(ShapeValuesTest, TensorProtoRoundTrip) {
  // raw_data (little-endian int64) and typed fields read alike.
  TensorProto raw;
  raw.set_data_type(TensorProto::INT64);
  raw.add_dims(2);
  const int64_t data[2] = {3, -1};
  raw.set_raw_data(std::string(reinterpret_cast<const char*>(data), 16));
  EXPECT_THAT(IntsOf(ValueFromTensor(raw)), ElementsAre(3, -1));
  const TensorProto typed = ValueToTensor(*ValueFromTensor(raw), "t");
  EXPECT_THAT(typed.int64_data(), ElementsAre(3, -1));
  EXPECT_THAT(IntsOf(ValueFromTensor(typed)), ElementsAre(3, -1));
  // External data and short payloads give nothing.
  TensorProto external = raw;
  external.set_data_location(TensorProto::EXTERNAL);
  EXPECT_FALSE(ValueFromTensor(external));
  TensorProto short_raw = raw;
  short_raw.set_raw_data(std::string(8, '\0'));
  EXPECT_FALSE(ValueFromTensor(short_raw));
}

}  // namespace
}  // namespace autoshard
