// Issue 29 end to end: a GPT-2-shaped decoder whose token embedding `wte` is
// tied to the LM head (one initializer read by the first Gather and by the
// last Gemm, transB = 1, as torch exports a Linear on 2-D input), planned on
// 4 IPUs. With --weights variable the embedding and the head share IPU 0 (a
// fifth stage returns there), the fake compiler that enforces PopART's rule
// accepts the annotated model, and the report says "5 stages on 4 IPUs";
// `apply` refuses a hand split that puts them on two IPUs. The full GPT-2
// small is bench/make_gpt2_model.py --tied (too large for a unit test).
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "graph/model_io.h"
#include "gtest/gtest.h"
#include "sharder/autoshard.h"
#include "tests/test_util.h"
#include "tests/tiny_gpt2.h"
#include "writers/emit.h"

namespace autoshard {
namespace {

namespace fs = std::filesystem;
using ::autoshard::testing::TinyTiedGpt2;
using ::testing::HasSubstr;

// GPT-2 small's proportions: 12 blocks, and the head's 2 s d v FLOPs about
// 5 blocks' 24 s d^2 (GPT-2 small: 9.9 GFLOP vs 1.8 per block at s = 128).
onnx::ModelProto Model() { return TinyTiedGpt2(12, 64, 4096, 32); }

Options FourIpus(const std::string& weights) {
  Options options;
  options.num_ipus = 4;
  options.weights = weights;
  options.max_search_s = 20;
  return options;
}

// The report with its wrapped lines joined again.
std::string Unwrapped(const std::string& report) {
  return absl::StrReplaceAll(report, {{"\n  ", " "}});
}

// The node's index in the model, by name.
int NodeIndex(const onnx::ModelProto& m, const std::string& name) {
  for (int i = 0; i < m.graph().node_size(); ++i)
    if (m.graph().node(i).name() == name) return i;
  return -1;
}

// Runs the fake compiler with FAKE_WEIGHTS=variable (no node limit) on `plan`
// applied to `model`; returns its exit code and output.
std::pair<int, std::string> FakeCompile(const onnx::ModelProto& model,
                                        const Plan& plan) {
  onnx::ModelProto annotated = model;
  EXPECT_TRUE(ApplyPlan(plan, &annotated).ok());
  testing::TempDir dir;
  const fs::path path = dir.path() / "m.onnx";
  testing::WriteBytes(path, annotated.SerializeAsString());
  const fs::path log = dir.path() / "log.txt";
  const int status = std::system(
      absl::StrCat("FAKE_WEIGHTS=variable FAKE_LIMIT=1000000 ", FAKE_COMPILER,
                   " ", path.string(), " > ", log.string(), " 2>&1")
          .c_str());
  return {WEXITSTATUS(status), testing::ReadBytes(log)};
}

TEST(SharedWeightsTest, VariableWeightsPutEmbeddingAndHeadOnOneIpu) {
  const onnx::ModelProto model = Model();
  absl::StatusOr<Plan> plan = PlanModel(model, FourIpus("variable"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  const int gather = NodeIndex(model, "/wte/Gather");
  const int head = NodeIndex(model, "/lm_head/Gemm");
  EXPECT_EQ(plan->placement.ipu[gather], 0);
  EXPECT_EQ(plan->placement.ipu[head], 0);
  EXPECT_EQ(plan->placement.pipeline_stage[head], 4);
  EXPECT_EQ(plan->proto.num_ipus(), 4);
  EXPECT_EQ(plan->proto.stages().num_stages(), 5);
  EXPECT_THAT(plan->proto.stages().stage_ipus(),
              ::testing::ElementsAre(0, 1, 2, 3, 0));
  EXPECT_EQ(plan->proto.stages().shared_weight(), "transformer.wte.weight");
  EXPECT_TRUE(plan->proto.fits());
  const std::string report = Unwrapped(ReportText(plan->proto, false));
  EXPECT_THAT(report, HasSubstr("IPUs: 4 (5 stages on 4 IPUs)"));
  EXPECT_THAT(report,
              HasSubstr("stages: 5 stages on 4 IPUs (stage 4 on IPU 0)"));
  // The certificate covers revisiting plans: the smaller of the bounds on
  // monotone splits and on plans whose last stage returns to IPU 0 (Note
  // [Revisit bound]), above the bound over every node -> IPU map.
  EXPECT_THAT(plan->proto.performance().bound_method(),
              HasSubstr("returns to IPU 0"));
  EXPECT_THAT(plan->proto.performance().bound_method(),
              HasSubstr("the smaller of the bounds"));
  EXPECT_GT(plan->proto.performance().certified_bound_s(),
            plan->proto.performance().lower_bound_s());
  EXPECT_LE(plan->proto.performance().certified_bound_s(),
            plan->proto.performance().bottleneck_s());
  // wte (4096 x 64 floats = 1,048,576 B) is held once, on IPU 0 only.
  EXPECT_GE(plan->proto.ipus(0).weight_bytes(), 1048576);
  for (int d = 1; d < 4; ++d)
    EXPECT_LT(plan->proto.ipus(d).weight_bytes(), 1048576) << d;
  const auto [code, output] = FakeCompile(model, *plan);
  EXPECT_EQ(code, 0) << output;
}

TEST(SharedWeightsTest, TheFakeCompilerRefusesAVariableOnTwoIpus) {
  const onnx::ModelProto model = Model();
  // A hand split: everything up to block 5 on IPU 0, the rest (the head
  // among it) left over for IPU 1 (PopRT's rule).
  const std::vector<NamedShardingPoint> points = {{"/h.5/Add_1", 0, 0}};
  absl::StatusOr<Plan> plan =
      PlanFromShardingPoints(model, FourIpus("constant"), points);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const auto [code, output] = FakeCompile(model, *plan);
  EXPECT_EQ(code, 1);
  EXPECT_THAT(output, HasSubstr("Can not copy variable tensor "
                                "transformer.wte.weight between virtual "
                                "graphs when pipelining"));
  // `apply` with --weights variable refuses it, naming the weight and its
  // readers' IPUs.
  absl::StatusOr<Plan> refused =
      PlanFromShardingPoints(model, FourIpus("variable"), points);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("weight 'transformer.wte.weight' is read on IPUs 0, "
                        "1 ('/wte/Gather' on IPU 0, '/lm_head/Gemm' on IPU "
                        "1)"));
}

TEST(SharedWeightsTest, ConstantWeightsReportTheChoiceAndTheBytes) {
  const onnx::ModelProto model = Model();
  absl::StatusOr<Plan> plan = PlanModel(model, FourIpus("constant"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->proto.has_stages());
  const proto::StageLayout& st = plan->proto.stages();
  EXPECT_EQ(st.weights(), "constant");
  EXPECT_EQ(st.shared_weight(), "transformer.wte.weight");
  EXPECT_EQ(st.shared_weight_bytes(), 1048576);
  ASSERT_GT(st.other_bottleneck_s(), 0);
  // The chosen plan is the faster of the two.
  EXPECT_LE(plan->proto.performance().bottleneck_s(), st.other_bottleneck_s());
  // Revisiting holds wte once, duplicating twice: 1,048,576 B apart (each
  // plan's other weights are each on one IPU either way).
  EXPECT_EQ(std::abs(st.weight_bytes_saved()), 1048576);
  EXPECT_EQ(st.weight_bytes_saved() > 0, st.choice() == "revisit");
  const std::string report = Unwrapped(ReportText(plan->proto, false));
  EXPECT_THAT(report, HasSubstr("shared weight 'transformer.wte.weight' "
                                "(1.05 MB), read far apart (--weights "
                                "constant)"));
  EXPECT_THAT(report, HasSubstr("1.05 MB of weights against the fastest"));
}

}  // namespace
}  // namespace autoshard
