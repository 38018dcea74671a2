// One `shard --split-dir` run through the library, step by step, counted
// through the instrumentation hook (base/step_counts.h), and WriteOutputs'
// all-or-nothing promise.
#include "writers/write_outputs.h"

#include <filesystem>
#include <string>
#include <vector>

#include "base/step_counts.h"
#include "graph/model_io.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {
namespace fs = std::filesystem;

LoadedModel SqueezeNet() {
  auto loaded = LoadModel(std::string(AUTOSHARD_SOURCE_DIR) +
                          "/models/squeezenet1_1.onnx");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  return loaded.ok() ? *std::move(loaded) : LoadedModel();
}

OutputFiles FilesIn(const fs::path& dir) {
  OutputFiles files;
  files.model = (dir / "model.onnx").string();
  files.plan = (dir / "plan.json").string();
  files.sharding_config = (dir / "sharding.yaml").string();
  files.split_dir = (dir / "stages").string();
  return files;
}

TEST(StepCountsTest, ShardWithSplitDirDoesEachStepOnce) {
  LoadedModel loaded = SqueezeNet();
  Options options;
  options.num_ipus = 2;
  options.strategy = "raw";
  testing::TempDir dir;
  ThreadStepCounts() = StepCounts();
  absl::StatusOr<Plan> plan = PlanModel(loaded.model, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<WrittenOutputs> written =
      WriteOutputs(*plan, FilesIn(dir.path()), &loaded, {}, "squeezenet");
  ASSERT_TRUE(written.ok()) << written.status();
  const StepCounts counts = ThreadStepCounts();
  // Planning names the nodes; ApplyPlan takes the plan's names.
  EXPECT_EQ(counts.node_namings, 1);
  // raw makes one split: evaluated once, and that evaluation gives the plan
  // its figures (no second evaluation of the chosen split).
  EXPECT_EQ(counts.plan_evaluations, 1);
  // The split takes planning's DAG. Its interface types keep the model's
  // symbolic batch ('batch', costed as 1 by planning): the one ONNX
  // inference runs on the model as declared, and planning's shapes are that
  // inference with batch = 1 (graph/fixed_shapes.h). Of squeezenet's 65
  // nodes one runs ONNX's inference function again: the Flatten making
  // 'logits', whose recorded type [batch,1000] names the fixed symbol.
  EXPECT_EQ(counts.dag_builds, 1);
  EXPECT_EQ(counts.onnx_inferences, 1);
  EXPECT_EQ(counts.node_reinferences, 1);
  // model, plan, config, and the folder: "DIR (2 stage models and
  // manifest.json)".
  ASSERT_EQ(written->written.size(), 4u);
  EXPECT_EQ(written->written[3], (dir.path() / "stages").string() +
                                     " (2 stage models and manifest.json)");
  EXPECT_TRUE(fs::exists(dir.path() / "stages" / "stage_1.onnx"));
}

// A model whose inputs are static: planning's one ONNX inference also types
// the stage interfaces, so the whole run infers once and builds one DAG.
TEST(StepCountsTest, StaticInputsInferOnce) {
  testing::TempDir dir;
  LoadedModel loaded;
  loaded.path = dir.path() / "in.onnx";
  loaded.model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,8] x) => (float[2,8] y) {
      a = Relu(x)
      b = Sigmoid(a)
      y = Relu(b)
    })");
  Options options;
  options.num_ipus = 2;
  options.strategy = "raw";
  ThreadStepCounts() = StepCounts();
  absl::StatusOr<Plan> plan = PlanModel(loaded.model, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<WrittenOutputs> written =
      WriteOutputs(*plan, FilesIn(dir.path()), &loaded, {}, "in.onnx");
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(ThreadStepCounts().node_namings, 1);
  EXPECT_EQ(ThreadStepCounts().dag_builds, 1);
  EXPECT_EQ(ThreadStepCounts().onnx_inferences, 1);
  EXPECT_EQ(ThreadStepCounts().node_reinferences, 0);
  EXPECT_EQ(ThreadStepCounts().plan_evaluations, 1);
  // 2 IPUs, 3 nodes: two stages, and the cut tensor typed float[2,8] from
  // planning's inference (a or b, whichever raw cuts).
  absl::StatusOr<LoadedModel> stage1 =
      LoadModel((dir.path() / "stages" / "stage_1.onnx").string());
  ASSERT_TRUE(stage1.ok()) << stage1.status();
  ASSERT_EQ(stage1->model.graph().input_size(), 1);
  const auto& shape =
      stage1->model.graph().input(0).type().tensor_type().shape();
  ASSERT_EQ(shape.dim_size(), 2);
  EXPECT_EQ(shape.dim(0).dim_value(), 2);
  EXPECT_EQ(shape.dim(1).dim_value(), 8);
}

TEST(StepCountsTest, AutoEvaluatesEachCandidateOnce) {
  LoadedModel loaded = SqueezeNet();
  Options options;
  options.num_ipus = 2;  // strategy auto, the default
  ThreadStepCounts() = StepCounts();
  absl::StatusOr<Plan> plan = PlanModel(loaded.model, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // auto compares raw, search, optimal, optimal+search and ideal: five
  // candidates, each evaluated once (EvaluatePlan), and none again for the
  // plan's figures: 5 evaluations in all.
  ASSERT_EQ(plan->proto.candidates_size(), 5);
  EXPECT_EQ(ThreadStepCounts().plan_evaluations, 5);
  EXPECT_EQ(ThreadStepCounts().onnx_inferences, 1);
  EXPECT_EQ(ThreadStepCounts().node_namings, 1);
  EXPECT_EQ(ThreadStepCounts().dag_builds, 1);
}

TEST(WriteOutputsTest, ABadPathWritesNothing) {
  LoadedModel loaded = SqueezeNet();
  Options options;
  options.num_ipus = 2;
  options.strategy = "raw";
  absl::StatusOr<Plan> plan = PlanModel(loaded.model, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  testing::TempDir dir;
  OutputFiles files = FilesIn(dir.path());
  files.extra.emplace_back((dir.path() / "no_folder" / "page.html").string(),
                           "<html>");
  absl::StatusOr<WrittenOutputs> written =
      WriteOutputs(*plan, files, &loaded, {}, "squeezenet");
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(WriteOutputsTest, ThePlanOfAnotherModelIsRefused) {
  LoadedModel loaded = SqueezeNet();
  Plan plan;  // a plan of no nodes
  testing::TempDir dir;
  OutputFiles files;
  files.model = (dir.path() / "model.onnx").string();
  absl::StatusOr<WrittenOutputs> written =
      WriteOutputs(plan, files, &loaded, {}, "squeezenet");
  EXPECT_EQ(written.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// ApplyPlan names nodes once: it takes the names planning gave (graph/
// naming.h: an empty name becomes <op_type>_<index>, a repeated one
// <name>_<k>) instead of naming the model again.
TEST(ApplyPlanTest, TakesThePlansNamesWithoutNamingAgain) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,8] x) => (float[1,8] y) {
      a = Relu(x)
      b = Relu(a)
      y = Relu(b)
    })",
                                                   /*name_nodes=*/false);
  model.mutable_graph()->mutable_node(1)->set_name("r");
  model.mutable_graph()->mutable_node(2)->set_name("r");
  Options options;
  options.num_ipus = 1;
  absl::StatusOr<Plan> plan = PlanModel(model, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->node_names, (std::vector<std::string>{"Relu_0", "r", "r_1"}));
  ThreadStepCounts() = StepCounts();
  onnx::ModelProto annotated = model;
  ASSERT_TRUE(ApplyPlan(*plan, &annotated).ok());
  EXPECT_EQ(ThreadStepCounts().node_namings, 0);
  EXPECT_EQ(annotated.graph().node(0).name(), "Relu_0");
  EXPECT_EQ(annotated.graph().node(1).name(), "r");
  EXPECT_EQ(annotated.graph().node(2).name(), "r_1");
  // A node's own name that the plan does not have: another model.
  onnx::ModelProto other = model;
  other.mutable_graph()->mutable_node(1)->set_name("s");
  EXPECT_EQ(ApplyPlan(*plan, &other).code(),
            absl::StatusCode::kFailedPrecondition);
}

// With --compile-cmd the candidates take planning's names (ApplyPlan in the
// candidate writer, sharder/compile_judge.h): one naming in all (before: a
// second one on a copy for the compiler). `true` accepts the first
// candidate; jobs 1 compiles it on this thread.
TEST(StepCountsTest, ACompileCmdRunNamesOnce) {
  LoadedModel loaded = SqueezeNet();
  Options options;
  options.num_ipus = 2;
  options.strategy = "search";
  options.compile_cmd = "true";
  ThreadStepCounts() = StepCounts();
  absl::StatusOr<Plan> plan = PlanModel(loaded.model, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_GE(plan->proto.search().candidates(), 1);
  EXPECT_EQ(ThreadStepCounts().node_namings, 1);
  EXPECT_EQ(ThreadStepCounts().dag_builds, 1);
}

// A Relu with an attribute ONNX does not define: the checker refuses it.
constexpr char kUnknownAttributeModel[] = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  g (float[2] x) => (float[2] y) {
    y = Relu <foo = 1> (x)
  })";

// OutputFiles::check_model: the compile oracle's candidates skip the ONNX
// checker. The model fails it; so does the input (no file at its path), so
// the checked write warns, the unchecked one does not look.
TEST(WriteOutputsTest, CheckModelFalseSkipsTheChecker) {
  testing::TempDir dir;
  LoadedModel loaded{testing::ParseModelText(kUnknownAttributeModel),
                     dir.path() / "in.onnx",
                     {},
                     {}};
  Options options;
  options.num_ipus = 1;
  absl::StatusOr<Plan> plan = PlanModel(loaded.model, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const bool check : {true, false}) {
    OutputFiles files;
    files.model = (dir.path() / "out.onnx").string();
    files.check_model = check;
    absl::StatusOr<WrittenOutputs> written =
        WriteOutputs(*plan, files, &loaded, {}, "in.onnx");
    ASSERT_TRUE(written.ok()) << written.status();
    bool warned = false;
    for (const std::string& w : written->warnings) {
      warned =
          warned || w.find("Unrecognized attribute: foo") != std::string::npos;
    }
    EXPECT_EQ(warned, check);
  }
}

}  // namespace
}  // namespace autoshard
