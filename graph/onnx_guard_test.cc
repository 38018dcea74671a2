#include "graph/onnx_guard.h"

#include <string>

#include "gmock/gmock.h"
#include "graph/model_io.h"
#include "graph/shapes.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

using ::testing::HasSubstr;
using testing::ParseModelText;

// Each of these crashed (SIGFPE) or read out of bounds inside ONNX 1.12's
// convPoolShapeInference before the guard; now each is refused naming n0.
TEST(OnnxGuardTest, ConvAndPoolAttributesOnnxDividesByAreChecked) {
  const struct {
    const char* attrs;
    const char* op;
    const char* reason;
  } kCases[] = {
      {"kernel_shape = [3, 3], strides = [0, 1]", "MaxPool", "strides has 0"},
      {"strides = [1, 0]", "Conv", "strides has 0"},
      {"dilations = [0, 1]", "Conv", "dilations has 0"},
      {"kernel_shape = [0, 3]", "AveragePool", "kernel_shape has 0"},
      {"kernel_shape = [3, 3], pads = [1, 1]", "MaxPool",
       "pads has 2 values; 2 spatial dims need 4"},
      {"kernel_shape = [3, 3], strides = [1, 1, 1]", "MaxPool",
       "strides has 3 values, the others 2"},
      {"group = 0", "Conv", "group is 0"},
      {"pads = [-1, 0, 0, 0]", "Conv", "pads has -1"},
  };
  for (const auto& c : kCases) {
    const std::string op = c.op;
    const std::string call =
        op == "Conv" ? "y = Conv <" + std::string(c.attrs) + "> (x, w)"
                     : "y = " + op + " <" + std::string(c.attrs) + "> (x)";
    onnx::ModelProto m = ParseModelText(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[1,1,8,8] x, float[1,1,3,3] w) => (float y) {
        )" + call + R"(
      })");
    absl::Status s = CheckModelForOnnx(m);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << call;
    EXPECT_THAT(s.message(), HasSubstr("node 'n0' (" + op + ")")) << call;
    EXPECT_THAT(s.message(), HasSubstr(c.reason)) << call;
    // autoshard's own InferShapes refuses it too, before calling ONNX.
    EXPECT_FALSE(InferShapes(&m).ok()) << call;
  }
}

TEST(OnnxGuardTest, ValidConvPassesAndPadsMayBeGivenAlone) {
  onnx::ModelProto m = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,1,8,8] x, float[1,1,3,3] w) => (float y) {
      a = Conv <strides = [2, 2], pads = [1, 1, 1, 1], group = 1> (x, w)
      y = MaxPool <kernel_shape = [2, 2], pads = [0, 0, 0, 0]> (a)
    })");
  EXPECT_TRUE(CheckModelForOnnx(m).ok()) << CheckModelForOnnx(m);
}

// SplitToSequence with a scalar split of 0 divides by it in ONNX 1.12.
TEST(OnnxGuardTest, SplitToSequenceWithSplitZeroIsRefused) {
  onnx::ModelProto m = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[6,4] x) => (float[6,4] y) <int64 s = {0}> {
      q = SplitToSequence(x, s)
      y = ConcatFromSequence <axis = 0> (q)
    })");
  // `int64 s = {0}` is a 1-element 1-D tensor; make it the scalar 0.
  m.mutable_graph()->mutable_initializer(0)->clear_dims();
  absl::Status s = CheckModelForOnnx(m);
  EXPECT_THAT(s.message(), HasSubstr("node 'n0' (SplitToSequence)"));
  EXPECT_THAT(s.message(), HasSubstr("split is the scalar 0"));
  onnx::ModelProto negative = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[6,4] x) => (float[6,4] y) <int64[2] s = {7, -1}> {
      a, b = Split <axis = 0> (x, s)
      y = Concat <axis = 0> (a, b)
    })");
  EXPECT_THAT(CheckModelForOnnx(negative).message(),
              HasSubstr("split input has -1"));
}

// A Split without outputs divided by its number of outputs in ONNX 1.12's
// inference (SIGFPE; found by fuzz_shapes, kept as
// tests/fuzz_regressions/fuzz_shapes/split_without_outputs.onnx). Fewer
// inputs or outputs than the op's schema at the model's opset are refused.
TEST(OnnxGuardTest, NodesWithFewerInputsOrOutputsThanTheirSchemaAreRefused) {
  onnx::ModelProto m = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[6,4] x) => (float[3,4] y) {
      y, z = Split <axis = 0> (x)
    })");
  m.mutable_graph()->mutable_node(0)->clear_output();
  absl::Status s = CheckModelForOnnx(m);
  EXPECT_THAT(s.message(),
              HasSubstr("node 'n0' (Split): has 0 outputs; Split-13 makes at "
                        "least 1"));
  // Reshape-5 and later take (data, shape): one input is too few at opset
  // 13, as ONNX's checker says too.
  onnx::ModelProto reshape = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[6,4] x, int64[1] t) => (float[24] y) {
      y = Reshape(x, t)
    })");
  EXPECT_TRUE(CheckModelForOnnx(reshape).ok());
  reshape.mutable_graph()->mutable_node(0)->mutable_input()->RemoveLast();
  EXPECT_THAT(CheckModelForOnnx(reshape).message(),
              HasSubstr("has 1 inputs; Reshape-13 takes at least 2"));
}

TEST(OnnxGuardTest, AxisBeyondAnyRankIsRefused) {
  onnx::ModelProto m = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[6,4] x) => (float y) {
      y = Softmax <axis = -9223372036854775807> (x)
    })");
  EXPECT_THAT(CheckModelForOnnx(m).message(),
              HasSubstr("axis is -9223372036854775807"));
}

// A declared dim of 2^31 (2147483648) crashed ONNX's data propagation
// (RAFT, at a Shape node); 2^31 - 1 is the largest accepted.
TEST(OnnxGuardTest, DimsBeyondTheBoundAndOverflowingSizesAreRefused) {
  auto check = [](const std::string& dims) {
    return CheckModelForOnnx(ParseModelText(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[)" + dims + R"(] x) => (float y) {
        y = Relu(x)
      })"));
  };
  EXPECT_THAT(check("1,2147483648").message(),
              HasSubstr("tensor 'x' has the dim 2147483648"));
  // 2^31-1 squared is about 2^62 elements, 2^64 bytes as float: refused.
  EXPECT_THAT(check("2147483647,2147483647").message(),
              HasSubstr("more than 2^48 elements"));
  EXPECT_TRUE(check("1,2147483647").ok());
}

// Adds to `m` a function local.F<name> whose one node calls local.F<callee>.
void AddFunction(onnx::ModelProto* m, const std::string& name,
                 const std::string& callee) {
  onnx::FunctionProto* f = m->add_functions();
  f->set_domain("local");
  f->set_name(name);
  f->add_input("x");
  f->add_output("y");
  onnx::NodeProto* n = f->add_node();
  n->set_op_type(callee);
  n->set_domain("local");
  n->add_input("x");
  n->add_output("y");
}

// InferShapeForFunctionNode recursed until the stack overflowed on these.
TEST(OnnxGuardTest, FunctionsThatCallThemselvesAreRefused) {
  onnx::ModelProto m = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13, "local" : 1]>
    g (float[4] x) => (float[4] y) {
      y = local.F(x)
    })");
  AddFunction(&m, "F", "F");
  EXPECT_THAT(CheckModelForOnnx(m).message(),
              HasSubstr("function 'F' calls itself (F -> F)"));
  m.clear_functions();
  AddFunction(&m, "F", "G");
  AddFunction(&m, "G", "H");
  AddFunction(&m, "H", "F");
  EXPECT_THAT(CheckModelForOnnx(m).message(), HasSubstr("(F -> G -> H -> F)"));
  // A chain F0 -> F1 -> ... -> F70 has no cycle but is deeper than 64.
  m.clear_functions();
  for (int i = 0; i < 70; ++i) {
    AddFunction(&m, "F" + std::to_string(i), "F" + std::to_string(i + 1));
  }
  EXPECT_THAT(CheckModelForOnnx(m).message(), HasSubstr("calls functions"));
}

// Wraps `m`'s main graph's nodes in `levels` Ifs: each then_branch is the
// graph below, each else_branch that graph's first node alone.
void NestInIfs(onnx::ModelProto* m, int levels) {
  for (int i = 0; i < levels; ++i) {
    onnx::GraphProto body = m->graph();
    body.clear_input();
    onnx::GraphProto other = body;
    other.clear_node();
    *other.add_node() = testing::ParseModelText(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[4] x) => (float[4] y) { y = Relu(x) })")
                            .graph()
                            .node(0);
    onnx::GraphProto* g = m->mutable_graph();
    g->clear_node();
    onnx::NodeProto* n = g->add_node();
    n->set_op_type("If");
    n->set_name("if" + std::to_string(i));
    n->add_input("c");
    n->add_output(body.output(0).name());
    const onnx::GraphProto* branches[] = {&body, &other};
    const char* names[] = {"then_branch", "else_branch"};
    for (int b = 0; b < 2; ++b) {
      onnx::AttributeProto* a = n->add_attribute();
      a->set_name(names[b]);
      a->set_type(onnx::AttributeProto::GRAPH);
      *a->mutable_g() = *branches[b];
    }
  }
}

// y = Relu(x) in `levels` nested Ifs.
onnx::ModelProto NestedModel(int levels) {
  onnx::ModelProto m = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4] x, bool c) => (float[4] y) {
      y = Relu(x)
    })");
  NestInIfs(&m, levels);
  return m;
}

TEST(OnnxGuardTest, BodiesNestedDeeperThanTheLimitAreRefused) {
  // 99 Ifs: 100 graphs deep, accepted.
  onnx::ModelProto m = NestedModel(kMaxGraphNesting - 1);
  EXPECT_TRUE(CheckModelForOnnx(m).ok()) << CheckModelForOnnx(m);
  onnx::ModelProto deep = NestedModel(kMaxGraphNesting);
  EXPECT_THAT(CheckModelForOnnx(deep).message(),
              HasSubstr("bodies nest more than 100 deep"));
}

// A 1,000,000-node chain took minutes and 2.5 GB to plan: more than
// kMaxNodes (500,000) nodes are refused before any work.
TEST(OnnxGuardTest, ModelsWithMoreThanTheNodeLimitAreRefused) {
  onnx::ModelProto m = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4] t0) => (float[4] t1) {
      t1 = Relu(t0)
    })");
  onnx::GraphProto* g = m.mutable_graph();
  const onnx::NodeProto relu = g->node(0);
  for (int i = 1; i <= kMaxNodes; ++i) {  // 500,001 nodes in all
    onnx::NodeProto* n = g->add_node();
    *n = relu;
    n->set_input(0, "t" + std::to_string(i));
    n->set_output(0, "t" + std::to_string(i + 1));
  }
  g->mutable_output(0)->set_name("t" + std::to_string(kMaxNodes + 1));
  EXPECT_THAT(CheckModelForOnnx(m).message(),
              HasSubstr("more than 500000 nodes"));
  g->mutable_node()->RemoveLast();  // 500,000: the limit itself is fine
  g->mutable_output(0)->set_name("t" + std::to_string(kMaxNodes));
  EXPECT_TRUE(CheckModelForOnnx(m).ok());
}

// Protobuf's default recursion limit (100) refused an If nested 33 deep as
// "does not parse"; 99 levels (100 graphs) now parse, and 150 are named as
// too deep rather than as garbage.
TEST(OnnxGuardTest, DeeplyNestedModelsParseOrAreNamedTooDeep) {
  onnx::ModelProto m = NestedModel(kMaxGraphNesting - 1);
  EXPECT_TRUE(ParseModelBytes(m.SerializeAsString(), "m.onnx").ok());
  onnx::ModelProto deeper = NestedModel(150);
  absl::StatusOr<onnx::ModelProto> r =
      ParseModelBytes(deeper.SerializeAsString(), "m.onnx");
  EXPECT_THAT(r.status().message(),
              HasSubstr("m.onnx: nests deeper than autoshard reads (100 "
                        "levels"));
}

// fuzz_shapes: a Shape at opset 15 reading a name nothing defines crashed
// ONNX 1.12 (SIGSEGV reading 0x28): Shape-15's data propagation reads its
// input's type, null there (Note [Shape-15 reads its input's type
// unchecked]). The minimal model, by hand: one node, no inputs.
onnx::ModelProto ShapeOfUndefinedName(int64_t opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  onnx::OperatorSetIdProto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  onnx::NodeProto* n = m.mutable_graph()->add_node();
  n->set_name("n0");
  n->set_op_type("Shape");
  n->add_input("x");
  n->add_output("s");
  return m;
}

TEST(OnnxGuardTest, ShapeOfAnUndefinedNameIsRefusedFromOpset15) {
  onnx::ModelProto m = ShapeOfUndefinedName(15);
  absl::Status s = CheckModelForOnnx(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("node 'n0' (Shape): input 'x' is not defined before "
                        "it (no graph or function input, initializer or "
                        "earlier node makes it); ONNX 1.12's Shape-15 data "
                        "propagation would read its missing type"));
  EXPECT_FALSE(InferShapes(&m).ok());
  // The fuzzer's opset (65) resolves to Shape-15 too.
  EXPECT_FALSE(CheckModelForOnnx(ShapeOfUndefinedName(65)).ok());
  // Shape-13's propagator checks the type: left to ONNX.
  EXPECT_TRUE(CheckModelForOnnx(ShapeOfUndefinedName(13)).ok());
  // Defined by a later node only: still undefined when ONNX reaches it.
  onnx::ModelProto later = ShapeOfUndefinedName(15);
  onnx::NodeProto* relu = later.mutable_graph()->add_node();
  relu->set_name("n1");
  relu->set_op_type("Relu");
  relu->add_input("s");
  relu->add_output("x");
  EXPECT_THAT(CheckModelForOnnx(later).message(),
              HasSubstr("node 'n0' (Shape): input 'x' is not defined"));
}

// A defined input whose producer's inference fails (Add of [2] and [3]) or
// that is declared without a type left the same null type: InferShapes gives
// it an empty one for ONNX (no crash), and removes it when still empty.
TEST(OnnxGuardTest, ShapeOfAnUntypedValueDoesNotCrashOnnx) {
  onnx::ModelProto m = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2] a, float[3] b) => (int64[1] s) {
      c = Add(a, b)
      s = Shape(c)
    })");
  EXPECT_TRUE(InferShapes(&m).ok());
  for (const auto& vi : m.graph().value_info()) {
    EXPECT_NE(vi.name(), "c") << vi.DebugString();
  }
  onnx::ModelProto untyped = ShapeOfUndefinedName(15);
  untyped.mutable_graph()->add_input()->set_name("x");
  EXPECT_TRUE(InferShapes(&untyped).ok());
  for (const auto& vi : untyped.graph().value_info()) {
    EXPECT_NE(vi.name(), "x") << vi.DebugString();
  }
  // A typed producer: ONNX fills the empty type, and data propagation still
  // gives Reshape its shape.
  onnx::ModelProto ok = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2,3] a) => (int64[2] s) {
      c = Relu(a)
      s = Shape(c)
      r = Reshape(a, s)
    })");
  ASSERT_TRUE(InferShapes(&ok).ok()) << InferShapes(&ok);
  bool c_typed = false;
  onnx::TensorShapeProto r;
  for (const auto& vi : ok.graph().value_info()) {
    if (vi.name() == "c") c_typed = vi.type().has_tensor_type();
    if (vi.name() == "r") r = vi.type().tensor_type().shape();
  }
  EXPECT_TRUE(c_typed);
  ASSERT_EQ(r.dim_size(), 2);
  EXPECT_EQ(r.dim(1).dim_value(), 3);
}

// ONNX 1.12 types an initializer that is no graph input only from IR version
// 4 on: below that, Shape-15 of one read a null type (SIGSEGV reading 0x28,
// tests/fuzz_regressions/fuzz_shapes/shape15_of_initializer_ir3.onnx is the
// first model below). Now it gets the empty placeholder,
// removed afterwards. From IR 4 on the initializer keeps its own type (no
// placeholder hides it): Shape of the [2, 3] w is inferred as [2].
TEST(OnnxGuardTest, ShapeOfAnInitializerDoesNotCrashOnnxBelowIr4) {
  onnx::ModelProto old = ParseModelText(R"(
    <ir_version: 3, opset_import: ["" : 15]>
    g (float[2] x) => (int64[1] s) <float[2] w = {1.0, 2.0}> {
      s = Shape(w)
    })");
  EXPECT_TRUE(InferShapes(&old).ok());
  for (const auto& vi : old.graph().value_info()) {
    EXPECT_NE(vi.name(), "w") << vi.DebugString();
  }
  onnx::ModelProto ir8 = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[6] x) => (float[2,3] r) <float[2,3] w = {1, 2, 3, 4, 5, 6}> {
      s = Shape(w)
      r = Reshape(x, s)
    })");
  ASSERT_TRUE(InferShapes(&ir8).ok());
  onnx::TensorShapeProto s;
  for (const auto& vi : ir8.graph().value_info()) {
    EXPECT_NE(vi.name(), "w") << "no placeholder for a typed initializer";
    if (vi.name() == "s") s = vi.type().tensor_type().shape();
  }
  ASSERT_EQ(s.dim_size(), 1);
  EXPECT_EQ(s.dim(0).dim_value(), 2);  // Shape of a rank-2 tensor: [2]
}

// In a model-local function there is no value_info to type a value in, so
// Shape-15 there may read only a function input.
TEST(OnnxGuardTest, ShapeInAFunctionOfAComputedValueIsRefused) {
  onnx::ModelProto m = ShapeOfUndefinedName(15);
  m.mutable_graph()->mutable_node(0)->set_op_type("F");
  m.mutable_graph()->mutable_node(0)->set_domain("f");
  m.mutable_graph()->add_input()->set_name("x");
  onnx::OperatorSetIdProto* o = m.add_opset_import();
  o->set_domain("f");
  o->set_version(1);
  onnx::FunctionProto* f = m.add_functions();
  f->set_name("F");
  f->set_domain("f");
  f->add_input("p");
  f->add_output("q");
  *f->add_opset_import() = m.opset_import(0);
  onnx::NodeProto* shape = f->add_node();
  shape->set_name("shape");
  shape->set_op_type("Shape");
  shape->add_input("p");
  shape->add_output("q");
  EXPECT_TRUE(CheckModelForOnnx(m).ok()) << CheckModelForOnnx(m);
  onnx::NodeProto* id = f->add_node();
  *id = *shape;
  id->set_name("id");
  id->set_op_type("Identity");
  id->set_output(0, "z");
  f->mutable_node()->SwapElements(0, 1);
  f->mutable_node(1)->set_input(0, "z");
  EXPECT_THAT(CheckModelForOnnx(m).message(),
              HasSubstr("function 'f:F': node 'shape' (Shape): reads 'z', "
                        "computed inside the model-local function"));
}

}  // namespace
// A constant with fewer values than its dims: ONNX 1.12's Range inference
// read the missing scalar `start` (SIGSEGV, found by fuzz_shapes); every
// initializer and Constant value must store as many values as its dims say.
TEST(OnnxGuardTest, TensorsThatStoreFewerValuesThanTheirDimsAreRefused) {
  onnx::ModelProto m = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g () => (int64[N] y)
        <int64 start = {0}, int64 limit = {5}, int64 delta = {1}> {
      y = Range(start, limit, delta)
    })");
  ASSERT_TRUE(CheckModelForOnnx(m).ok());
  // The fuzzer's input: `start` a scalar (1 value) that stores none.
  m.mutable_graph()->mutable_initializer(0)->clear_int64_data();
  absl::Status s = CheckModelForOnnx(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("node 'n0' (Range): constant input 'start' has "
                        "dims [] (1 value) but stores 0 values"));
  EXPECT_FALSE(InferShapes(&m).ok());
  // raw_data: 8 bytes are one int64; 4 bytes are half of one.
  onnx::TensorProto* start = m.mutable_graph()->mutable_initializer(0);
  start->set_raw_data(std::string(8, '\0'));
  EXPECT_TRUE(CheckModelForOnnx(m).ok());
  start->set_raw_data(std::string(4, '\0'));
  EXPECT_THAT(CheckModelForOnnx(m).message(),
              HasSubstr("stores 4 raw bytes, not a whole number of values"));
  // A Constant node's value read by Reshape: dims [2] with 3 values stored.
  onnx::ModelProto c = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[1,4] y) <float[4,4] w> {
      s = Constant <value = int64[2] {1, 4}> ()
      r = Reshape(x, s)
      y = MatMul(r, w)
    })");
  // The weight w carries dims only (no values): MatMul's inference reads
  // none, so it is accepted.
  ASSERT_EQ(c.graph().initializer_size(), 0);  // the parser drops it: add w
  onnx::TensorProto* w = c.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->add_dims(4);
  ASSERT_TRUE(CheckModelForOnnx(c).ok());
  c.mutable_graph()
      ->mutable_node(0)
      ->mutable_attribute(0)
      ->mutable_t()
      ->add_int64_data(3);
  EXPECT_THAT(CheckModelForOnnx(c).message(),
              HasSubstr("node 'n1' (Reshape): constant input 's' has dims [2] "
                        "(2 values) but stores 3 values"));
}

}  // namespace autoshard
