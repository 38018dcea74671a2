#include "writers/split/split.h"

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/annotations.h"
#include "graph/graph.h"
#include "graph/model_io.h"
#include "graph/tensor_types.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Annotates node i with IPU and pipeline stage stages[i].
onnx::ModelProto Annotated(const char* text, const std::vector<int>& stages) {
  onnx::ModelProto m = testing::ParseModelText(text);
  EXPECT_EQ(m.graph().node_size(), static_cast<int>(stages.size()));
  for (int i = 0; i < m.graph().node_size() && i < (int)stages.size(); ++i) {
    SetPlacement(stages[i], stages[i], m.mutable_graph()->mutable_node(i));
  }
  return m;
}

// What `field` gives for each of `items` (a repeated proto field), in order.
template <typename Items, typename Field>
std::vector<std::string> Each(const Items& items, Field field) {
  std::vector<std::string> out;
  for (const auto& item : items) out.push_back(field(item));
  return out;
}
std::vector<std::string> NodeNames(const onnx::ModelProto& m) {
  return Each(m.graph().node(), [](const auto& n) { return n.name(); });
}
std::vector<std::string> InputNames(const onnx::ModelProto& m) {
  return Each(m.graph().input(), [](const auto& vi) { return vi.name(); });
}
std::vector<std::string> OutputNames(const onnx::ModelProto& m) {
  return Each(m.graph().output(), [](const auto& vi) { return vi.name(); });
}
std::vector<std::string> InitializerNames(const onnx::ModelProto& m) {
  return Each(m.graph().initializer(), [](const auto& t) { return t.name(); });
}
std::vector<std::string> Sources(const proto::SplitStage& stage) {
  return Each(stage.inputs(), [](const auto& in) { return in.source(); });
}

// Writes the split to a fresh folder: every stage must pass the ONNX checker
// and strict shape inference (WriteSplit checks both).
void ExpectWritable(const Split& split) {
  testing::TempDir tmp;
  std::vector<std::string> warnings;
  absl::Status s = WriteSplit(split, tmp.path() / "split", "", "", &warnings);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_THAT(warnings, IsEmpty());
}

TEST(SplitTest, CutTensorReadByTwoLaterStages) {
  // a (stage 0) is read by stage 1 (b) and stage 2 (c): stage 0 sends it
  // once; both read it straight from stage 0.
  const Split split = *SplitModel(Annotated(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x) => (float[2,3] y) {
      a = Relu(x)
      b = Neg(a)
      y = Add(a, b)
    })",
                                            {0, 1, 2}),
                                  "");
  ASSERT_EQ(split.stages.size(), 3u);
  const auto& m = split.manifest;
  EXPECT_THAT(OutputNames(split.stages[0].model), ElementsAre("a"));
  EXPECT_THAT(m.stages(0).outputs(0).read_by(), ElementsAre(1, 2));
  EXPECT_THAT(InputNames(split.stages[1].model), ElementsAre("a"));
  EXPECT_THAT(Sources(m.stages(1)), ElementsAre("0:a"));
  EXPECT_THAT(InputNames(split.stages[2].model), ElementsAre("a", "b"));
  EXPECT_THAT(Sources(m.stages(2)), ElementsAre("0:a", "1:b"));
  EXPECT_THAT(OutputNames(split.stages[2].model), ElementsAre("y"));
  ASSERT_EQ(m.outputs_size(), 1);
  EXPECT_EQ(m.outputs(0).source(), "2:y");
  // The cut tensor's type comes from shape inference: float[2,3].
  const auto& type = split.stages[1].model.graph().input(0).type();
  EXPECT_EQ(type.tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(type.tensor_type().shape().dim_size(), 2);
  EXPECT_THAT(m.stages(1).inputs(0).dims(), ElementsAre("2", "3"));
  // The placement attributes are not carried into the stages.
  for (const auto& stage : split.stages) {
    for (const auto& node : stage.model.graph().node()) {
      EXPECT_EQ(node.attribute_size(), 0) << node.name();
    }
  }
  ExpectWritable(split);
}

TEST(SplitTest, WeightSharedByTwoStagesIsInBoth) {
  // w (2x2 floats) is read on stage 0 and stage 1; u only on stage 1.
  const Split split = *SplitModel(Annotated(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,2] x) => (float[1,2] y)
        <float[2,2] w = {1.0, 2.0, 3.0, 4.0}, float[2] u = {1.0, 1.0}> {
      a = MatMul(x, w)
      b = MatMul(a, w)
      y = Add(b, u)
    })",
                                            {0, 1, 1}),
                                  "");
  EXPECT_THAT(InitializerNames(split.stages[0].model), ElementsAre("w"));
  EXPECT_THAT(InitializerNames(split.stages[1].model), ElementsAre("u", "w"));
  // Weights are not stage inputs.
  EXPECT_THAT(InputNames(split.stages[1].model), ElementsAre("a"));
  ExpectWritable(split);
}

TEST(SplitTest, IfBodyReadingAnEarlierStageTensorMakesItAnInput) {
  // The If (stage 1) reads t from stage 0 only inside its branches: t
  // becomes stage 1's input, next to the graph input c.
  const Split split = *SplitModel(Annotated(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x, bool c) => (float[2] y) {
      t = Relu(x)
      y = If(c) <
        then_branch = g1 () => (float[2] o1) { o1 = Add(t, t) },
        else_branch = g2 () => (float[2] o2) { o2 = Neg(t) }
      >
    })",
                                            {0, 1}),
                                  "");
  EXPECT_THAT(OutputNames(split.stages[0].model), ElementsAre("t"));
  EXPECT_THAT(InputNames(split.stages[0].model), ElementsAre("x"));
  EXPECT_THAT(InputNames(split.stages[1].model), ElementsAre("c", "t"));
  EXPECT_THAT(Sources(split.manifest.stages(1)),
              ElementsAre("graph_input", "0:t"));
  // The body is one node's attribute, copied whole.
  EXPECT_THAT(NodeNames(split.stages[1].model), ElementsAre("n1"));
  ExpectWritable(split);
}

TEST(SplitTest, GraphOutputProducedOnTheFirstStage) {
  // y0 is a model output and also feeds stage 1.
  const Split split = *SplitModel(Annotated(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4] x) => (float[4] y0, float[4] y1) {
      y0 = Relu(x)
      y1 = Neg(y0)
    })",
                                            {0, 1}),
                                  "");
  const auto& m = split.manifest;
  EXPECT_THAT(OutputNames(split.stages[0].model), ElementsAre("y0"));
  EXPECT_TRUE(m.stages(0).outputs(0).model_output());
  EXPECT_THAT(m.stages(0).outputs(0).read_by(), ElementsAre(1));
  ASSERT_EQ(m.outputs_size(), 2);
  EXPECT_EQ(m.outputs(0).source(), "0:y0");
  EXPECT_EQ(m.outputs(1).source(), "1:y1");
  ExpectWritable(split);
}

TEST(SplitTest, ConstantReadByEveryStageIsCopiedNotCut) {
  // k (a Constant on stage 0) is read on stages 0, 1 and 2: each stage holds
  // its own copy, and k is never a stage input or output.
  const Split split = *SplitModel(Annotated(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] y) {
      k = Constant <value = float[1] {2.0}> ()
      a = Add(x, k)
      b = Mul(a, k)
      y = Sub(b, k)
    })",
                                            {0, 0, 1, 2}),
                                  "");
  const auto& m = split.manifest;
  EXPECT_THAT(NodeNames(split.stages[0].model), ElementsAre("n0", "n1"));
  EXPECT_THAT(NodeNames(split.stages[1].model), ElementsAre("n0", "n2"));
  EXPECT_THAT(NodeNames(split.stages[2].model), ElementsAre("n0", "n3"));
  EXPECT_THAT(InputNames(split.stages[1].model), ElementsAre("a"));
  EXPECT_THAT(InputNames(split.stages[2].model), ElementsAre("b"));
  EXPECT_EQ(m.stages(0).copied_constant_nodes(), 0);
  EXPECT_EQ(m.stages(1).copied_constant_nodes(), 1);
  EXPECT_EQ(m.stages(2).copied_constant_nodes(), 1);
  ExpectWritable(split);
}

TEST(SplitTest, ConstantChainPlacedEarlierMovesToItsReaderAndDropsThere) {
  // s and w = ConstantOfShape(s) sit on stage 0, but only stage 1 reads w:
  // stage 1 gets both; stage 0 keeps no dangling copy.
  const Split split = *SplitModel(Annotated(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] y) {
      s = Constant <value = int64[1] {2}> ()
      w = ConstantOfShape(s)
      a = Relu(x)
      y = Add(a, w)
    })",
                                            {0, 0, 0, 1}),
                                  "");
  EXPECT_THAT(NodeNames(split.stages[0].model), ElementsAre("n2"));
  EXPECT_THAT(NodeNames(split.stages[1].model), ElementsAre("n0", "n1", "n3"));
  EXPECT_EQ(split.manifest.stages(1).copied_constant_nodes(), 2);
  ExpectWritable(split);
}

TEST(SplitTest, InitializersListedAsInputsStayInputsForIrVersion3) {
  // IR version 3 requires every initializer among the graph inputs: each
  // stage lists the ones it holds, and the manifest asks to feed only x.
  onnx::ModelProto model = Annotated(R"(
    <ir_version: 8, opset_import: ["" : 9]>
    g (float[1,2] x, float[2,2] w) => (float[1,2] y) <float[2,2] w = {1.0, 0.0, 0.0, 1.0}> {
      a = MatMul(x, w)
      y = Relu(a)
    })",
                                     {0, 1});
  model.set_ir_version(3);
  const Split split = *SplitModel(model, "");
  EXPECT_THAT(InputNames(split.stages[0].model), ElementsAre("x", "w"));
  EXPECT_THAT(Sources(split.manifest.stages(0)), ElementsAre("graph_input"));
  ASSERT_EQ(split.manifest.inputs_size(), 1);
  EXPECT_EQ(split.manifest.inputs(0).name(), "x");
  ExpectWritable(split);
}

TEST(SplitTest, CutTensorOfRunTimeRankTravelsFlattenedWithItsShape) {
  // t's rank depends on c (the branches return rank 2 and rank 1), so no
  // model input can declare it: stage 0 sends t's data flattened to 1-D and
  // its shape, and stage 1 reshapes them back into t.
  const Split split = *SplitModel(Annotated(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[2,3] x, bool c) => (float y) {
      t = If(c) <
        then_branch = g1 () => (float[2,3] o1) { o1 = Identity(x) },
        else_branch = g2 () => (float[6] o2) {
          s = Constant <value = int64[1] {6}> ()
          o2 = Reshape(x, s)
        }
      >
      y = ReduceSum <keepdims = 0> (t)
    })",
                                            {0, 1}),
                                  "");
  const auto& m = split.manifest;
  EXPECT_THAT(OutputNames(split.stages[0].model),
              ElementsAre("t__autoshard_data", "t__autoshard_shape"));
  EXPECT_EQ(m.stages(0).outputs(0).carries(), "data:t");
  EXPECT_EQ(m.stages(0).outputs(1).carries(), "shape:t");
  EXPECT_THAT(Sources(m.stages(1)),
              ElementsAre("0:t__autoshard_data", "0:t__autoshard_shape"));
  ASSERT_GE(split.stages[1].model.graph().node_size(), 1);
  const auto& unflatten = split.stages[1].model.graph().node(0);
  EXPECT_EQ(unflatten.op_type(), "Reshape");
  EXPECT_THAT(unflatten.output(), ElementsAre("t"));
  ExpectWritable(split);
}

TEST(SplitTest, CutTensorOfRunTimeRankThatIsAGraphOutputGoesBothWays) {
  // As above, but t is also a graph output, declared without a shape (as
  // exporters do; the checker wants one, so the model fails it as stage 0
  // does). Stage 0 outputs t for the model and its data and shape for stage
  // 1, which reads those two.
  onnx::ModelProto model = Annotated(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[2,3] x, bool c) => (float t, float y) {
      t = If(c) <
        then_branch = g1 () => (float[2,3] o1) { o1 = Identity(x) },
        else_branch = g2 () => (float[6] o2) {
          s = Constant <value = int64[1] {6}> ()
          o2 = Reshape(x, s)
        }
      >
      y = ReduceSum <keepdims = 0> (t)
    })",
                                     {0, 1});
  model.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->clear_shape();
  const Split split = *SplitModel(model, "");
  const auto& m = split.manifest;
  EXPECT_THAT(OutputNames(split.stages[0].model),
              ElementsAre("t", "t__autoshard_data", "t__autoshard_shape"));
  ASSERT_EQ(m.stages(0).outputs_size(), 3);
  EXPECT_TRUE(m.stages(0).outputs(0).model_output());
  EXPECT_THAT(m.stages(0).outputs(0).read_by(), IsEmpty());
  EXPECT_FALSE(m.stages(0).outputs(0).has_carries());
  EXPECT_EQ(m.stages(0).outputs(1).carries(), "data:t");
  EXPECT_THAT(m.stages(0).outputs(1).read_by(), ElementsAre(1));
  EXPECT_EQ(m.stages(0).outputs(2).carries(), "shape:t");
  EXPECT_THAT(m.stages(0).outputs(2).read_by(), ElementsAre(1));
  EXPECT_THAT(Sources(m.stages(1)),
              ElementsAre("0:t__autoshard_data", "0:t__autoshard_shape"));
  ASSERT_EQ(m.outputs_size(), 2);
  EXPECT_EQ(m.outputs(0).source(), "0:t");
  EXPECT_EQ(m.outputs(1).source(), "1:y");
  // Every stage passes the checks the model passes.
  testing::TempDir tmp;
  const fs::path path = tmp.path() / "m.onnx";
  std::string bytes;
  model.SerializeToString(&bytes);
  std::ofstream(path, std::ios::binary) << bytes;
  std::vector<std::string> warnings;
  absl::Status s = WriteSplit(split, tmp.path() / "split", "", path, &warnings);
  EXPECT_TRUE(s.ok()) << s;
  for (const auto& w : warnings) {
    EXPECT_THAT(w, HasSubstr("stage_0.onnx fails the ONNX checker as the "
                             "model does"));
  }
}

TEST(SplitTest, StageOfConstantsKeepsThemAndLaterStagesReadThem) {
  // Stage 1 holds only the chain s -> k. Copied into their readers, they
  // would leave stage 1 empty (no nodes, inputs or outputs: onnxruntime
  // cannot load it). Stage 1 keeps them and sends k to stage 2, which reads
  // it as a cut tensor; stage 0, which reads k too (a hand annotation),
  // holds copies.
  const Split split = *SplitModel(Annotated(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] y) {
      s = Constant <value = int64[1] {2}> ()
      k = ConstantOfShape <value = float[1] {2.0}> (s)
      a = Add(x, k)
      y = Mul(a, k)
    })",
                                            {1, 1, 0, 2}),
                                  "");
  const auto& m = split.manifest;
  ASSERT_EQ(split.stages.size(), 3u);
  EXPECT_THAT(NodeNames(split.stages[0].model), ElementsAre("n0", "n1", "n2"));
  EXPECT_EQ(m.stages(0).copied_constant_nodes(), 2);
  EXPECT_THAT(OutputNames(split.stages[0].model), ElementsAre("a"));
  EXPECT_THAT(NodeNames(split.stages[1].model), ElementsAre("n0", "n1"));
  EXPECT_EQ(m.stages(1).num_nodes(), 2);
  EXPECT_EQ(m.stages(1).copied_constant_nodes(), 0);
  EXPECT_THAT(InputNames(split.stages[1].model), IsEmpty());
  EXPECT_THAT(OutputNames(split.stages[1].model), ElementsAre("k"));
  EXPECT_THAT(m.stages(1).outputs(0).read_by(), ElementsAre(2));
  EXPECT_THAT(NodeNames(split.stages[2].model), ElementsAre("n3"));
  EXPECT_EQ(m.stages(2).copied_constant_nodes(), 0);
  EXPECT_THAT(Sources(m.stages(2)), ElementsAre("1:k", "0:a"));
  ExpectWritable(split);
}

TEST(SplitTest, StageThatNoLaterStageReadsStillHasAnOutput) {
  // Stage 1's constant is read only by stage 0, which holds a copy: stage 1
  // keeps it and outputs it, read by no stage, so that it runs. The same
  // for stage 2's dead Neg.
  const Split split = *SplitModel(Annotated(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] y) {
      k = Constant <value = float[1] {2.0}> ()
      y = Add(x, k)
      d = Neg(x)
    })",
                                            {1, 0, 2}),
                                  "");
  const auto& m = split.manifest;
  ASSERT_EQ(split.stages.size(), 3u);
  EXPECT_THAT(NodeNames(split.stages[0].model), ElementsAre("n0", "n1"));
  EXPECT_THAT(NodeNames(split.stages[1].model), ElementsAre("n0"));
  EXPECT_THAT(OutputNames(split.stages[1].model), ElementsAre("k"));
  EXPECT_THAT(m.stages(1).outputs(0).read_by(), IsEmpty());
  EXPECT_FALSE(m.stages(1).outputs(0).model_output());
  EXPECT_THAT(OutputNames(split.stages[2].model), ElementsAre("d"));
  EXPECT_THAT(m.stages(2).outputs(0).read_by(), IsEmpty());
  ExpectWritable(split);
}

TEST(SplitTest, RefusesModelsThatAreNotAnnotatedOrGoBackwards) {
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] y) {
      a = Relu(x)
      y = Neg(a)
    })";
  auto plain = SplitModel(testing::ParseModelText(text), "");
  ASSERT_FALSE(plain.ok());
  EXPECT_THAT(plain.status().message(), HasSubstr("not an annotated model"));

  onnx::ModelProto half = testing::ParseModelText(text);
  SetPlacement(0, 0, half.mutable_graph()->mutable_node(0));
  auto missing = SplitModel(half, "");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(),
              HasSubstr("node 'n1' (Neg) has no __ipu_number attribute"));

  auto backwards = SplitModel(Annotated(text, {1, 0}), "");
  ASSERT_FALSE(backwards.ok());
  EXPECT_THAT(backwards.status().message(),
              HasSubstr("node 'n1' (Neg) on pipeline stage 0 (IPU 0) reads "
                        "'a' from node 'n0' (Relu) on the later stage 1"));

  auto gap = SplitModel(Annotated(text, {0, 2}), "");
  ASSERT_FALSE(gap.ok());
  EXPECT_THAT(gap.status().message(),
              HasSubstr("no node is on pipeline stage 1"));

  onnx::ModelProto two_ipus = Annotated(text, {0, 0});
  SetPlacement(1, 0, two_ipus.mutable_graph()->mutable_node(1));
  auto shared = SplitModel(two_ipus, "");
  ASSERT_FALSE(shared.ok());
  EXPECT_THAT(shared.status().message(), HasSubstr("stage 0 is on two IPUs"));
}

TEST(SplitTest, TypeRulesGiveRankWhereOnnxInferenceCannot) {
  // ONNX 1.12 knows no com.microsoft schemas: after FastGelu nothing is
  // typed. The rules: FastGelu keeps x's type (float, rank 3); Gather of a
  // rank-3 tensor by rank-2 indices has rank 3 + 2 - 1 = 4; Unsqueeze with
  // two constant axes adds 2; MatMul of rank 3 by a 1-D weight drops one.
  onnx::ModelProto m = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
    g (float[1,4,8] x, int64[2,2] i) => (float[1,4,8] y) <float[8] v = {1,1,1,1,1,1,1,1}> {
      f = com.microsoft.FastGelu(x)
      gathered = Gather(f, i)
      axes = Constant <value = int64[2] {0, 1}> ()
      u = Unsqueeze(f, axes)
      mm = MatMul(f, v)
      y = Identity(x)
    })");
  auto graph = Graph::Build(m.graph());
  ASSERT_TRUE(graph.ok());
  std::vector<std::string> warnings;
  const TypeMap types = InferTensorTypes(m, *graph, &warnings);
  auto rank = [&](const std::string& name) {
    auto it = types.find(name);
    return it == types.end() || !it->second.tensor_type().has_shape()
               ? -1
               : it->second.tensor_type().shape().dim_size();
  };
  EXPECT_EQ(rank("f"), 3);
  EXPECT_EQ(rank("gathered"), 4);
  EXPECT_EQ(rank("u"), 5);
  EXPECT_EQ(rank("mm"), 2);
  EXPECT_EQ(types.at("gathered").tensor_type().elem_type(),
            onnx::TensorProto::FLOAT);
}

TEST(SplitTest, NewerOpsetRanksComeFromTheRulesNotOnnx112) {
  // Opset 18 moved ReduceMean's axes to an input. ONNX 1.12 applies the
  // opset-13 schema, ignores the input and reduces every axis (rank 0); the
  // rules read the axes input: one axis of a rank-2 tensor, rank 1.
  const Split split = *SplitModel(Annotated(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2,3] x) => (float[2] y) {
      axes = Constant <value = int64[1] {1}> ()
      r = ReduceMean <keepdims = 0> (x, axes)
      y = Relu(r)
    })",
                                            {0, 0, 1}),
                                  "");
  const auto& type = split.stages[1].model.graph().input(0).type();
  EXPECT_EQ(type.tensor_type().shape().dim_size(), 1);
  EXPECT_THAT(split.warnings, ElementsAre(HasSubstr("imports opset 18")));
}

// A model whose two weights live in m.onnx.data (128 bytes) in `dir`.
void WriteExternalModel(const fs::path& dir, const std::vector<int>& stages) {
  onnx::ModelProto m = Annotated(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[1,4] y) {
      a = MatMul(x, w0)
      y = MatMul(a, w1)
    })",
                                 stages);
  for (int i = 0; i < 2; ++i) {
    testing::AddExternalWeight(m.mutable_graph(), "w" + std::to_string(i),
                               "m.onnx.data", 64 * i);
  }
  std::ofstream(dir / "m.onnx.data", std::ios::binary)
      << std::string(128, '\0');
  std::string bytes;
  m.SerializeToString(&bytes);
  std::ofstream(dir / "m.onnx", std::ios::binary) << bytes;
}

// WriteExternalModel's model on two stages in `tmp`/in, loaded and split.
struct ExternalSplit {
  absl::StatusOr<LoadedModel> loaded;
  absl::StatusOr<Split> split = absl::UnknownError("not split");
};
ExternalSplit SplitExternalModel(const testing::TempDir& tmp) {
  fs::create_directories(tmp.path() / "in");
  WriteExternalModel(tmp.path() / "in", {0, 1});
  ExternalSplit e{LoadModel(tmp.path() / "in" / "m.onnx")};
  if (e.loaded.ok()) e.split = SplitModel(e.loaded->model, tmp.path() / "in");
  return e;
}

TEST(SplitTest, WritesStagesWithLinkedExternalDataAndReplacesAnEarlierSplit) {
  testing::TempDir tmp;
  auto [loaded, split] = SplitExternalModel(tmp);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_THAT(split->manifest.data_files(), ElementsAre("m.onnx.data"));
  const fs::path dir = tmp.path() / "split";
  std::vector<std::string> warnings;
  for (int round = 0; round < 2; ++round) {  // the second replaces the first
    ASSERT_TRUE(CheckSplitDir(dir, {loaded->path}).ok());
    absl::Status s =
        WriteSplit(*split, dir, tmp.path() / "in", loaded->path, &warnings);
    ASSERT_TRUE(s.ok()) << s;
  }
  EXPECT_THAT(warnings, IsEmpty());
  EXPECT_TRUE(fs::exists(dir / "manifest.json"));
  EXPECT_TRUE(testing::SharesBytes(tmp.path() / "in" / "m.onnx.data",
                                   dir / "m.onnx.data"));
  for (const char* f : {"stage_0.onnx", "stage_1.onnx"}) {
    EXPECT_TRUE(CheckModelFile(dir / f).ok()) << f;
    EXPECT_TRUE(LoadModel(dir / f).ok()) << f;
  }
  // Nothing but the split in the folder, no temporary folders beside it.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(tmp.path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 2);  // in/ and split/
}

std::string FileText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Everything that can fail runs in StageSplit; the destination changes
// only in MoveIntoPlace, and a staged split dropped unmoved leaves nothing.
TEST(SplitTest, StagedSplitChangesNothingUntilMovedIntoPlace) {
  testing::TempDir tmp;
  auto [loaded, split] = SplitExternalModel(tmp);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(split.ok()) << split.status();
  const fs::path dir = tmp.path() / "split";
  std::vector<std::string> warnings;
  ASSERT_TRUE(
      WriteSplit(*split, dir, tmp.path() / "in", loaded->path, &warnings).ok());
  const std::string earlier = FileText(dir / "manifest.json");
  split->manifest.set_model("changed.onnx");  // the new manifest differs
  {
    auto staged =
        StageSplit(*split, dir, tmp.path() / "in", loaded->path, &warnings);
    ASSERT_TRUE(staged.ok()) << staged.status();
    EXPECT_EQ(FileText(dir / "manifest.json"), earlier);
  }  // dropped: the staged folder is removed
  EXPECT_EQ(FileText(dir / "manifest.json"), earlier);
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path()),
                          fs::directory_iterator()),
            2);  // in/ and split/
  auto staged =
      StageSplit(*split, dir, tmp.path() / "in", loaded->path, &warnings);
  ASSERT_TRUE(staged.ok()) << staged.status();
  ASSERT_TRUE(staged->MoveIntoPlace().ok());
  EXPECT_THAT(FileText(dir / "manifest.json"), HasSubstr("changed.onnx"));
  EXPECT_FALSE(staged->MoveIntoPlace().ok());  // once only
}

TEST(SplitTest, RefusesFoldersItMustNotReplace) {
  testing::TempDir tmp;
  fs::create_directories(tmp.path() / "in");
  WriteExternalModel(tmp.path() / "in", {0, 1});
  const fs::path model = tmp.path() / "in" / "m.onnx";
  // The model's own folder holds inputs (and is not a split).
  absl::Status s = CheckSplitDir(tmp.path() / "in", {model});
  EXPECT_THAT(s.message(), HasSubstr("contains an input"));
  EXPECT_THAT(CheckSplitDir(model, {model}).message(),
              HasSubstr("is an input"));
  // A folder with other files.
  fs::create_directories(tmp.path() / "other");
  std::ofstream(tmp.path() / "other" / "notes.txt") << "keep me";
  EXPECT_THAT(CheckSplitDir(tmp.path() / "other", {model}).message(),
              HasSubstr("neither empty nor an earlier split"));
  EXPECT_THAT(CheckSplitDir(tmp.path() / "no" / "such", {model}).message(),
              HasSubstr("does not exist"));
  EXPECT_TRUE(CheckSplitDir(tmp.path() / "new", {model}).ok());
}

}  // namespace
}  // namespace autoshard
