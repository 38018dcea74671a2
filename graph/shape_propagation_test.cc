#include "graph/shape_propagation.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/shapes.h"
#include "gtest/gtest.h"
#include "tests/shape_propagation_fixture.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

using testing::Propagate;
using testing::Propagated;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// torch's chunk(2, dim=1) as RAFT exports it: Shape -> Gather -> Div -> Mul
// -> Slice, then a Conv on each half.
TEST(ShapePropagationTest, ShapeGatherMulSliceChannelSplit) {
  Propagated p = Propagate(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,8,5,5] x) => (float[?,?,?,?] y) <float[3,4,1,1] w> {
      s = Shape(x)
      one = Constant <value_int = 1> ()
      two = Constant <value_int = 2> ()
      c = Gather(s, one)
      half = Div(c, two)
      e1 = Mul(half, one)
      e2 = Mul(half, two)
      ax = Constant <value_ints = [0]> ()
      e1u = Unsqueeze(e1, ax)
      e2u = Unsqueeze(e2, ax)
      zero = Constant <value_ints = [0]> ()
      axis1 = Constant <value_ints = [1]> ()
      a = Slice(x, zero, e1u, axis1)
      b = Slice(x, e1u, e2u, axis1)
      y = Conv(b, w)
    })");
  EXPECT_FALSE(p.StaticBefore("b"));  // ONNX's inference gives up here
  EXPECT_THAT(p.Dims("a"), ElementsAre(1, 4, 5, 5));  // channels [0, 4)
  EXPECT_THAT(p.Dims("b"), ElementsAre(1, 4, 5, 5));  // channels [4, 8)
  EXPECT_THAT(p.Dims("y"), ElementsAre(1, 3, 5, 5));
  EXPECT_THAT(p.result.assumptions, IsEmpty());
}

// Swin's window partition: [B, H, W, C] -> [B, H/4, 4, W/4, 4, C] ->
// transpose -> [-1, 4 x 4, C], windows of 4 x 4 on an 8 x 8 map.
TEST(ShapePropagationTest, SwinWindowReshape) {
  Propagated p = Propagate(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,8,8,6] x) => (float[?,?,?] y) <float[6,6] wq> {
      s = Shape(x)
      i0 = Constant <value_int = 0> ()
      i1 = Constant <value_int = 1> ()
      i2 = Constant <value_int = 2> ()
      i3 = Constant <value_int = 3> ()
      b = Gather(s, i0)
      h = Gather(s, i1)
      w = Gather(s, i2)
      c = Gather(s, i3)
      win = Constant <value_int = 4> ()
      hn = Div(h, win)
      wn = Div(w, win)
      ax = Constant <value_ints = [0]> ()
      bu = Unsqueeze(b, ax)
      hnu = Unsqueeze(hn, ax)
      wnu = Unsqueeze(wn, ax)
      cu = Unsqueeze(c, ax)
      winu = Unsqueeze(win, ax)
      shape6 = Concat <axis = 0> (bu, hnu, winu, wnu, winu, cu)
      r = Reshape(x, shape6)
      t = Transpose <perm = [0, 1, 3, 2, 4, 5]> (r)
      area = Mul(win, win)
      areau = Unsqueeze(area, ax)
      m1 = Constant <value_ints = [-1]> ()
      shape3 = Concat <axis = 0> (m1, areau, cu)
      windows = Reshape(t, shape3)
      y = MatMul(windows, wq)
    })");
  EXPECT_FALSE(p.StaticBefore("windows"));
  EXPECT_THAT(p.Dims("r"), ElementsAre(1, 2, 4, 2, 4, 6));
  EXPECT_THAT(p.Dims("t"), ElementsAre(1, 2, 2, 4, 4, 6));
  // 1 x 8 x 8 x 6 = 384 elements = 4 windows x 16 x 6.
  EXPECT_THAT(p.Dims("windows"), ElementsAre(4, 16, 6));
  EXPECT_THAT(p.Dims("y"), ElementsAre(4, 16, 6));
}

// ShuffleNet's channel shuffle (view as groups, transpose, flatten back),
// then chunk(2) through a computed half, and a Conv on one half.
TEST(ShapePropagationTest, ChannelSplitAndShuffle) {
  Propagated p = Propagate(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,8,3,3] x) => (float[?,?,?,?] y) <float[2,4,1,1] w> {
      s = Shape(x)
      i0 = Constant <value_int = 0> ()
      i1 = Constant <value_int = 1> ()
      groups = Constant <value_int = 2> ()
      b = Gather(s, i0)
      c = Gather(s, i1)
      per = Div(c, groups)
      ax = Constant <value_ints = [0]> ()
      bu = Unsqueeze(b, ax)
      gu = Unsqueeze(groups, ax)
      peru = Unsqueeze(per, ax)
      hw_dims = Slice(s, hw_start, hw_end)
      hw_start = Constant <value_ints = [2]> ()
      hw_end = Constant <value_ints = [4]> ()
      shape5 = Concat <axis = 0> (bu, gu, peru, hw_dims)
      r = Reshape(x, shape5)
      t = Transpose <perm = [0, 2, 1, 3, 4]> (r)
      m1 = Constant <value_ints = [-1]> ()
      shape4 = Concat <axis = 0> (bu, m1, hw_dims)
      shuffled = Reshape(t, shape4)
      s2 = Shape(shuffled)
      c2 = Gather(s2, i1)
      half = Div(c2, groups)
      halfu = Unsqueeze(half, ax)
      end = Constant <value_ints = [9223372036854775807]> ()
      axis1 = Constant <value_ints = [1]> ()
      second = Slice(shuffled, halfu, end, axis1)
      y = Conv(second, w)
    })");
  EXPECT_THAT(p.Dims("r"), ElementsAre(1, 2, 4, 3, 3));
  EXPECT_THAT(p.Dims("shuffled"), ElementsAre(1, 8, 3, 3));
  EXPECT_FALSE(p.StaticBefore("second"));
  EXPECT_THAT(p.Dims("second"), ElementsAre(1, 4, 3, 3));
  EXPECT_THAT(p.Dims("y"), ElementsAre(1, 2, 3, 3));
}

// The issue's Sub -> ConstantOfShape -> Concat -> Reshape: lift a [6, 4]
// tensor to rank 4 by prepending ones.
TEST(ShapePropagationTest, SubConstantOfShapeConcatReshape) {
  Propagated p = Propagate(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[6,4] x) => (float[?,?,?,?] y) <float[2,1,3,3] w> {
      s = Shape(x)
      rank = Shape(s)
      four = Constant <value_ints = [4]> ()
      missing = Sub(four, rank)
      ones = ConstantOfShape <value = int64[1] {1}> (missing)
      full = Concat <axis = 0> (ones, s)
      x4 = Reshape(x, full)
      y = Conv(x4, w)
    })");
  EXPECT_THAT(p.Dims("ones"), ElementsAre(2));
  EXPECT_THAT(p.Dims("x4"), ElementsAre(1, 1, 6, 4));
  EXPECT_THAT(p.Dims("y"), ElementsAre(1, 2, 4, 2));  // 3 x 3 kernel, no pad
}

// Range over a dim, Where/Equal/Expand (torch's expand(-1, n)), Tile with
// computed repeats, and ReduceProd flattening for a Gemm.
TEST(ShapePropagationTest, RangeWhereExpandTileReduceProd) {
  Propagated p = Propagate(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,5,3] x, float[2,1] z) => (float[?,?] y, float[?,?] e, float[?,?] t) <float[16,8] emb, float[30,10] wg> {
      s = Shape(x)
      i1 = Constant <value_int = 1> ()
      n = Gather(s, i1)
      start = Constant <value_int = 0> ()
      step = Constant <value_int = 1> ()
      positions = Range(start, n, step)
      pe = Gather(emb, positions)
      target = Constant <value_ints = [-1, 3]> ()
      minus1 = Constant <value_ints = [-1]> ()
      is_keep = Equal(target, minus1)
      ones = Constant <value_ints = [1, 1]> ()
      eshape = Where(is_keep, ones, target)
      e = Expand(z, eshape)
      nu = Unsqueeze(n, i0)
      i0 = Constant <value_ints = [0]> ()
      one = Constant <value_ints = [1]> ()
      reps = Concat <axis = 0> (one, nu)
      t = Tile(z, reps)
      tail_start = Constant <value_ints = [1]> ()
      tail_end = Constant <value_ints = [3]> ()
      tail = Slice(s, tail_start, tail_end)
      features = ReduceProd <keepdims = 1> (tail)
      b = Slice(s, start_b, tail_start)
      start_b = Constant <value_ints = [0]> ()
      flat_shape = Concat <axis = 0> (b, features)
      flat = Reshape(x, flat_shape)
      y = Gemm(flat, wg)
    })");
  EXPECT_THAT(p.Dims("positions"), ElementsAre(5));
  EXPECT_THAT(p.Dims("pe"), ElementsAre(5, 8));
  EXPECT_THAT(p.Dims("e"), ElementsAre(2, 3));  // [2,1] expanded to [1,3]
  EXPECT_THAT(p.Dims("t"), ElementsAre(2, 5));  // [2,1] tiled [1,5] times
  EXPECT_THAT(p.Dims("flat"), ElementsAre(2, 15));
  EXPECT_THAT(p.Dims("y"), ElementsAre(2, 10));
}

// A computed length of 100,000 is never materialised as a value, but
// ONNX's Range inference, given the computed limit, still sizes the output.
TEST(ShapePropagationTest, LargeTensorsAreSizedNotMaterialised) {
  Propagated p = Propagate(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[100,1000] x) => (int64[?] r, float[?,?] y) <float[8,4] w> {
      n = Size(x)
      zero = Constant <value_int = 0> ()
      one = Constant <value_int = 1> ()
      r = Range(zero, n, one)
      shape = Shape(r)
      eight = Constant <value_ints = [8]> ()
      rows = Div(shape, eight)
      target = Concat <axis = 0> (rows, eight)
      x2 = Reshape(x, target)
      y = MatMul(x2, w)
    })");
  EXPECT_THAT(p.Dims("r"), ElementsAre(100000));
  EXPECT_THAT(p.Dims("x2"), ElementsAre(12500, 8));
  EXPECT_THAT(p.Dims("y"), ElementsAre(12500, 4));
}

// torchvision's resize by a float scale: sizes = floor(float(h, w) x 2).
TEST(ShapePropagationTest, FloatScaleCastFloorResize) {
  Propagated p = Propagate(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,3,5,7] x) => (float[?,?,?,?] y) <float[4,3,3,3] w> {
      s = Shape(x)
      from = Constant <value_ints = [2]> ()
      to = Constant <value_ints = [4]> ()
      hw = Slice(s, from, to)
      hwf = Cast <to = 1> (hw)
      scale = Constant <value_float = 2.0> ()
      scaled = Mul(hwf, scale)
      floored = Floor(scaled)
      hw2 = Cast <to = 7> (floored)
      nc = Slice(s, zero, from)
      zero = Constant <value_ints = [0]> ()
      sizes = Concat <axis = 0> (nc, hw2)
      r = Resize <mode = "linear"> (x, , , sizes)
      y = Conv(r, w)
    })");
  EXPECT_FALSE(p.StaticBefore("r"));
  EXPECT_THAT(p.Dims("r"), ElementsAre(1, 3, 10, 14));
  EXPECT_THAT(p.Dims("y"), ElementsAre(1, 4, 8, 12));
}

// NonMaxSuppression: 1 image x 3 classes x min(5, 10 boxes) = 15 at most,
// an assumption; the gathered boxes then feed a MatMul.
TEST(ShapePropagationTest, NonMaxSuppressionTakesItsBound) {
  Propagated p = Propagate(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,10,4] boxes, float[1,3,10] scores) => (float[?,?] y) <float[4,8] w> {
      max_out = Constant <value = int64[1] {5}> ()
      selected = NonMaxSuppression(boxes, scores, max_out)
      two = Constant <value_int = 2> ()
      box_index = Gather <axis = 1> (selected, two)
      flat_boxes = Squeeze(boxes, zero)
      zero = Constant <value_ints = [0]> ()
      picked = Gather(flat_boxes, box_index)
      y = MatMul(picked, w)
    })");
  EXPECT_THAT(p.Dims("selected"), ElementsAre(15, 3));
  EXPECT_THAT(p.Dims("picked"), ElementsAre(15, 4));
  EXPECT_THAT(p.Dims("y"), ElementsAre(15, 8));
  ASSERT_EQ(p.result.assumptions.size(), 1u);
  const ShapeAssumption& a = p.result.assumptions[0];
  EXPECT_EQ(a.node, "n1");
  EXPECT_EQ(a.op_type, "NonMaxSuppression");
  EXPECT_EQ(a.tensor, "selected");
  EXPECT_EQ(a.dim, 0);
  EXPECT_EQ(a.value, 15);
  EXPECT_THAT(a.reason, HasSubstr("min(max_output_boxes_per_class 5"));
}

// NonZero of a runtime mask: at most all 6 elements. TopK with k computed
// from shapes (min(300, 10) = 10) is exact; with k a graph input, a bound.
TEST(ShapePropagationTest, NonZeroAndTopK) {
  Propagated p = Propagate(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (bool[2,3] mask, float[10] scores, int64[1] k_in) => (int64[?,?] nz, float[?] v, float[?] v2) {
      nz = NonZero(mask)
      s = Shape(scores)
      cap = Constant <value_ints = [300]> ()
      k = Min(s, cap)
      v, i = TopK(scores, k)
      v2, i2 = TopK(scores, k_in)
    })");
  EXPECT_THAT(p.Dims("nz"), ElementsAre(2, 6));
  EXPECT_THAT(p.Dims("v"), ElementsAre(10));
  EXPECT_THAT(p.Dims("v2"), ElementsAre(10));
  ASSERT_EQ(p.result.assumptions.size(), 3u);  // NonZero; TopK's 2 outputs
  EXPECT_EQ(p.result.assumptions[0].op_type, "NonZero");
  EXPECT_EQ(p.result.assumptions[0].dim, 1);
  EXPECT_EQ(p.result.assumptions[0].value, 6);
  EXPECT_EQ(p.result.assumptions[1].tensor, "v2");
  EXPECT_THAT(p.result.assumptions[1].reason, HasSubstr("k unknown"));
}

// Issue 8: a data-dependent dim the graph does not bound (its input's shape
// is not static) is 1, an assumption naming the node. A bound that one known
// input still implies is taken. An input of unknown rank leaves it unknown.
TEST(ShapePropagationTest, DataDependentDimsWithoutABoundAre1) {
  Propagated p = Propagate(R"(
    <ir_version: 8, opset_import: ["" : 13, "custom" : 1]>
    g (bool[N,3] mask, float[M] scores, int64[1] k_in, float[N] x, bool[4] c4, float[B,10,4] boxes, float[B,3,10] scores3, float[1,K,4] boxes2, float[1,3,K] scores2) => (int64[?,?] nz) {
      nz = NonZero(mask)
      v, i = TopK(scores, k_in)
      u, ui, uinv, uc = Unique(x)
      cx = Compress(x, c4)
      max_out = Constant <value = int64[1] {5}> ()
      sel = NonMaxSuppression(boxes, scores3, max_out)
      sel2 = NonMaxSuppression(boxes2, scores2, max_out)
      t = custom.Opaque(mask)
      nz2 = NonZero(t)
    })");
  // N x 3 elements, N unknown: 1.
  EXPECT_THAT(p.Dims("nz"), ElementsAre(2, 1));
  // k and the scores' length M unknown: 1.
  EXPECT_THAT(p.Dims("v"), ElementsAre(1));
  EXPECT_THAT(p.Dims("i"), ElementsAre(1));
  // Unique of N elements: 1 unique value; inverse_indices has N (unknown).
  EXPECT_THAT(p.Dims("u"), ElementsAre(1));
  EXPECT_THAT(p.Dims("ui"), ElementsAre(1));
  EXPECT_THAT(p.Dims("uinv"), ElementsAre(-1));
  EXPECT_THAT(p.Dims("uc"), ElementsAre(1));
  // Compress of N elements by a 4-long condition: at most 4.
  EXPECT_THAT(p.Dims("cx"), ElementsAre(4));
  // NMS with the batch B unknown: 1; with the boxes K unknown, batch 1 x
  // classes 3 x max_output_boxes_per_class 5 = 15.
  EXPECT_THAT(p.Dims("sel"), ElementsAre(1, 3));
  EXPECT_THAT(p.Dims("sel2"), ElementsAre(15, 3));
  // NonZero of a tensor of unknown rank: ONNX's [?, ?] stays.
  EXPECT_THAT(p.Dims("nz2"), ElementsAre(-1, -1));

  // One per assumed dim, in visiting order; none for nz2.
  std::vector<std::string> tensors;
  for (const ShapeAssumption& a : p.result.assumptions) {
    tensors.push_back(a.tensor);
  }
  EXPECT_THAT(tensors, ElementsAre("nz", "v", "i", "u", "ui", "uc", "cx", "sel",
                                   "sel2"));
  const ShapeAssumption& nz = p.result.assumptions[0];
  EXPECT_EQ(nz.node, "n0");
  EXPECT_EQ(nz.op_type, "NonZero");
  EXPECT_EQ(nz.dim, 1);
  EXPECT_EQ(nz.value, 1);
  EXPECT_EQ(nz.reason, "the input's element count unknown: 1 assumed");
  EXPECT_EQ(p.result.assumptions[1].node, "n1");
  EXPECT_EQ(p.result.assumptions[1].reason,
            "k and the axis' length unknown: 1 assumed");
  EXPECT_EQ(p.result.assumptions[3].value, 1);
  EXPECT_EQ(p.result.assumptions[6].value, 4);
  EXPECT_THAT(p.result.assumptions[6].reason,
              HasSubstr("the condition's length"));
  EXPECT_EQ(p.result.assumptions[7].node, "n5");
  EXPECT_EQ(p.result.assumptions[7].value, 1);
  EXPECT_THAT(p.result.assumptions[7].reason, HasSubstr("1 assumed"));
  EXPECT_EQ(p.result.assumptions[8].value, 15);
  EXPECT_THAT(p.result.assumptions[8].reason, HasSubstr("(boxes unknown)"));
}

// Malformed nodes (an Add without inputs, a Where with one) leave their
// outputs unknown; the pass never dereferences an input that is not there.
TEST(ShapePropagationTest, NodesMissingInputsStayUnknown) {
  onnx::ModelProto m = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (bool[2] c) => (float[?] y, float[?] w) {
      y = Add()
      w = Where(c)
    })");
  const ShapePropagationResult result = PropagateShapes(&m);
  const TensorInfoMap after = CollectTensorInfo(m.graph());
  EXPECT_FALSE(after.at("y").IsStatic());
  EXPECT_FALSE(after.at("w").IsStatic());
  EXPECT_THAT(result.assumptions, IsEmpty());
}

// GPT-2 as onnxruntime's optimizer writes it: com.microsoft ops, for which
// ONNX 1.12 has no schema, between MatMuls.
TEST(ShapePropagationTest, ContribOpsOfAGpt2Block) {
  Propagated p = Propagate(R"(
    <ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
    g (int32[1,3] ids, int32[1,3] pos, int32[1,5] mask, float[2,1,2,2,4] past) => (float[?,?,?] y) <float[50,8] wte, float[16,8] wpe, float[8] gamma, float[8] beta, float[8,24] wqkv, float[24] bqkv, float[8,8] wo, float[8,32] wfc, float[32] bfc> {
      emb, mask_index, emb_sum = com.microsoft.EmbedLayerNormalization(ids, , wte, wpe, , gamma, beta, , pos)
      att, present = com.microsoft.Attention <num_heads = 2> (emb, wqkv, bqkv, mask, past)
      proj = MatMul(att, wo)
      normed, , , sum = com.microsoft.SkipLayerNormalization(proj, emb_sum, gamma, beta)
      fc = MatMul(normed, wfc)
      y = com.microsoft.FastGelu(fc, bfc)
    })");
  EXPECT_THAT(p.Dims("emb"), ElementsAre(1, 3, 8));
  EXPECT_THAT(p.Dims("mask_index"), ElementsAre(1));
  EXPECT_THAT(p.Dims("att"), ElementsAre(1, 3, 8));
  // past has 2 positions: present holds 2 + 3, heads of 8 / 2 = 4.
  EXPECT_THAT(p.Dims("present"), ElementsAre(2, 1, 2, 5, 4));
  EXPECT_THAT(p.Dims("proj"), ElementsAre(1, 3, 8));
  EXPECT_THAT(p.Dims("sum"), ElementsAre(1, 3, 8));
  EXPECT_THAT(p.Dims("fc"), ElementsAre(1, 3, 32));
  EXPECT_THAT(p.Dims("y"), ElementsAre(1, 3, 32));
}

// A shape the file records for an op nobody can infer is kept and used.
TEST(ShapePropagationTest, RecordedValueInfoIsUsed) {
  onnx::ModelProto m = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13, "custom" : 1]>
    g (float[2,3] x) => (float[?,?] y) <float[4,5] w> {
      c = custom.Mystery(x)
      y = MatMul(c, w)
    })");
  onnx::ValueInfoProto* vi = m.mutable_graph()->add_value_info();
  vi->set_name("c");
  TensorInfo info{onnx::TensorProto::FLOAT, true, {7, 4}};
  SetTensorType(info, vi->mutable_type());
  ASSERT_TRUE(InferShapes(&m).ok());
  PropagateShapes(&m);
  const TensorInfoMap infos = CollectTensorInfo(m.graph());
  EXPECT_THAT(infos.at("y").dims, ElementsAre(7, 5));
}

// Names that --batch-size fixes bind the same names elsewhere.
TEST(ShapePropagationTest, BatchSizeBindsTheSameSymbolInOtherInputs) {
  onnx::ModelProto m = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (int64[batch,seq] ids, float[2,batch,4,past] kv) => (int64[batch,seq] y) {
      y = Identity(ids)
    })");
  ShapeOptions options;
  options.batch_size = 3;
  ASSERT_TRUE(ApplyInputShapes(options, &m).ok());
  const TensorInfoMap infos = CollectTensorInfo(m.graph());
  EXPECT_THAT(infos.at("ids").dims, ElementsAre(3, -1));
  EXPECT_THAT(infos.at("kv").dims, ElementsAre(2, 3, 4, -1));
}

}  // namespace
}  // namespace autoshard
