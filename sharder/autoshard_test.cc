#include "sharder/autoshard.h"

#include <map>

#include "costmodel/device_profile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_graphs.h"
#include "tests/test_util.h"
#include "writers/emit.h"

namespace autoshard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Two MatMuls with 4x4 float weights (64 B each) around a residual Add.
// n0 = MatMul(x, w0); n1 = Relu(n0); n2 = Add(n1, x) [candidate: 2 inputs];
// n3 = MatMul(n2, w1). Total weights 128 B, one candidate (n2), so the
// average per candidate is 128 B: the walk from n2 = {n0, n1, n2} (64 B) is
// dropped, leaving one subgraph for 2 IPUs; rebuilt without dropping it is
// {n0, n1, n2} (64 B) and the leftover {n3} (64 B).
constexpr const char* kResidual = testing::kResidualModelText;

TEST(AutoshardTest, PlanAndApplyAnnotateEveryNode) {
  onnx::ModelProto model =
      testing::ParseModelText(kResidual, /*name_nodes=*/false);
  Options options;
  options.num_ipus = 2;
  options.strategy = "raw";
  auto plan = PlanModel(model, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // Unnamed nodes are named <op_type>_<index>.
  EXPECT_THAT(plan->node_names,
              ElementsAre("MatMul_0", "Relu_1", "Add_2", "MatMul_3"));
  // 128 B total, target 64 B: the first subgraph {n0, n1, n2} has 64 B.
  EXPECT_THAT(plan->placement.ipu, ElementsAre(0, 0, 0, 1));
  ASSERT_EQ(plan->proto.sharding_points_size(), 1);
  EXPECT_EQ(plan->proto.sharding_points(0).node(), "Add_2");
  EXPECT_EQ(plan->proto.ipus(0).weight_bytes(), 64);
  EXPECT_EQ(plan->proto.ipus(1).weight_bytes(), 64);
  // Add_2's output (1x4 floats = 16 B) is the cut tensor.
  EXPECT_EQ(plan->proto.ipus(0).cut_tensor_out_bytes(), 16);
  EXPECT_EQ(plan->proto.ipus(1).cut_tensor_in_bytes(), 16);
  EXPECT_EQ(plan->proto.summary().nodes_named(), 4);

  ASSERT_TRUE(ApplyPlan(*plan, &model).ok());
  for (int i = 0; i < model.graph().node_size(); ++i) {
    const auto& node = model.graph().node(i);
    ASSERT_EQ(node.attribute_size(), 2) << node.name();
    EXPECT_EQ(node.attribute(0).name(), kIpuAttribute);
    EXPECT_EQ(node.attribute(0).i(), plan->placement.ipu[i]);
    EXPECT_EQ(node.attribute(1).name(), kStageAttribute);
  }
}

TEST(AutoshardTest, ShardingConfigRoundTripReproducesTheAssignment) {
  onnx::ModelProto model = testing::ParseModelText(kResidual);
  Options options;
  options.num_ipus = 2;
  auto plan = PlanModel(model, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto points =
      ParseShardingConfigYaml(ShardingConfigYaml(plan->proto), "s.yaml");
  ASSERT_TRUE(points.ok()) << points.status();
  auto applied = PlanFromShardingPoints(model, options, *points);
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(applied->placement.ipu, plan->placement.ipu);
}

TEST(AutoshardTest, UnknownNodeInShardingConfigIsAnError) {
  onnx::ModelProto model = testing::ParseModelText(kResidual);
  Options options;
  auto plan = PlanFromShardingPoints(model, options, {{"nope", 0, 0}});
  EXPECT_THAT(plan.status().message(),
              HasSubstr("node 'nope', which the model does not have"));
}

TEST(AutoshardTest, ShardingConfigErrorsNameTheEntry) {
  EXPECT_THAT(
      ParseShardingConfigYaml("- {node: a, device: -1}", "s.yaml")
          .status()
          .message(),
      HasSubstr(
          "s.yaml: entry 1: 'device' must be an integer from 0 to 2^31-1"));
  EXPECT_THAT(ParseShardingConfigYaml("{node: a}", "s.yaml").status().message(),
              HasSubstr("a list of {node"));
  EXPECT_THAT(
      ParseShardingConfigYaml("- {device: 1}", "s.yaml").status().message(),
      HasSubstr("entry 1 has no 'node'"));
}

TEST(AutoshardTest, ShardingConfigIsStrict) {
  EXPECT_THAT(
      ParseShardingConfigYaml("- {node: a, device: 1, ipu: 2}", "s.yaml")
          .status()
          .message(),
      HasSubstr("entry 1: unknown key 'ipu'"));
  EXPECT_THAT(
      ParseShardingConfigYaml(
          "- {node: a, device: 1}\n---\n- {node: b, device: 0}", "s.yaml")
          .status()
          .message(),
      HasSubstr("expected one YAML document"));
  EXPECT_THAT(
      ParseShardingConfigYaml("- {node: a, device: 99999999999}", "s.yaml")
          .status()
          .message(),
      HasSubstr("'device' must be an integer from 0 to 2^31-1"));
  onnx::ModelProto model = testing::ParseModelText(kResidual);
  Options options;
  // No points: one IPU (the config autoshard writes for a 1-IPU plan).
  auto one = PlanFromShardingPoints(model, options, {});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_THAT(one->placement.ipu, ElementsAre(0, 0, 0, 0));
  EXPECT_EQ(one->proto.num_ipus(), 1);
  EXPECT_THAT(one->proto.warnings(),
              ::testing::Contains(HasSubstr("has no points")));
}

TEST(AutoshardTest, ShardingConfigQuotesNamesThatYaml11ReadsAsOtherTypes) {
  proto::Plan plan;
  for (const char* name : {"yes", "on", "123", "0x10"}) {
    auto* pt = plan.add_sharding_points();
    pt->set_node(name);
  }
  const std::string yaml = ShardingConfigYaml(plan);
  EXPECT_THAT(yaml, HasSubstr("node: \"yes\""));
  EXPECT_THAT(yaml, HasSubstr("node: \"0x10\""));
  auto points = ParseShardingConfigYaml(yaml, "s.yaml");
  ASSERT_TRUE(points.ok()) << points.status();
  EXPECT_EQ((*points)[2].node, "123");
}

// A model exported with a static batch of 1 that hard-codes it again in a
// Reshape's constant, and one whose Reshape infers its first dim (-1).
constexpr const char* kStaticBatch = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  g (float[1,4] x) => (float[1,4] y) {
    s = Constant<value = int64[2] {1, 4}>()
    r = Reshape(x, s)
    y = Relu(r)
  })";
constexpr const char* kStaticBatchInferred = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  g (float[1,4] x) => (float[1,4] y) {
    s = Constant<value = int64[2] {-1, 4}>()
    r = Reshape(x, s)
    y = Relu(r)
  })";

TEST(AutoshardTest, BatchSizeReplacesAStaticBatch) {
  onnx::ModelProto model = testing::ParseModelText(kStaticBatchInferred);
  Options options;
  options.num_ipus = 1;
  options.shapes.batch_size = 8;
  auto plan = PlanModel(model, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->proto.batch_size(), 8);
  EXPECT_THAT(plan->proto.warnings(),
              ::testing::Contains(HasSubstr(
                  "the options replace static dims of the model (x[0] 1 -> "
                  "8); the shapes of the other tensors are inferred again")));
  // Relu's output is inferred again: 8 x 4 floats = 128 B, not the 16 B the
  // file's [1,4] output would give.
  EXPECT_GE(plan->proto.ipus(0).activation_bytes(), 128);
}

TEST(AutoshardTest, AConstantThatHardCodesTheOldBatchIsAnError) {
  onnx::ModelProto model = testing::ParseModelText(kStaticBatch);
  Options options;
  options.num_ipus = 1;
  options.shapes.batch_size = 8;
  // x is [8,4] = 32 elements; the constant [1,4] holds 4.
  EXPECT_EQ(PlanModel(model, options).status().message(),
            "node 'n1' (Reshape) hard-codes the shape [1,4] (constant 's'), "
            "which contradicts its input 'x' [8,4] (32 elements)");
  options.shapes.batch_size = 0;
  options.shapes.input_shapes["x"] = {2, 2};  // 4 elements, as [1,4]
  EXPECT_TRUE(PlanModel(model, options).ok());
  options.shapes.input_shapes["x"] = {1, 4, 1};
  EXPECT_THAT(PlanModel(model, options).status().message(),
              HasSubstr("has rank 3"));
}

TEST(AutoshardTest, BatchSizeThatChangesNothingIsWarnedAbout) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4] x) => (float[4] y) { y = Relu(x) })");  // rank 1: no batch
  Options options;
  options.num_ipus = 1;
  options.shapes.batch_size = 8;
  auto plan = PlanModel(model, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(
      plan->proto.warnings(),
      ::testing::Contains(HasSubstr("--batch-size 8 changed no input")));
}

TEST(AutoshardTest, AMultiOutputNodeSendsOnlyTheOutputsOthersRead) {
  // Split x[1,8] into a, b [1,4] (16 B each); Relu(a) stays on IPU 0 with the
  // Split; Sigmoid(b) and the Add go to IPU 1. Crossing: b (16 B) and c
  // (16 B) = 32 B; counting the Split's whole output would give 48 B.
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,8] x) => (float[1,4] y) {
      a, b = Split <axis = 1> (x)
      c = Relu(a)
      d = Sigmoid(b)
      y = Add(c, d)
    })");
  Options options;
  auto plan = PlanFromShardingPoints(model, options, {{"n1", 0, 0}});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->placement.ipu, ElementsAre(0, 0, 1, 1));
  EXPECT_EQ(plan->proto.ipus(0).cut_tensor_out_bytes(), 32);
  EXPECT_EQ(plan->proto.ipus(1).cut_tensor_in_bytes(), 32);
}

TEST(AutoshardTest, BytesOverloadReturnsAnAnnotatedModel) {
  onnx::ModelProto model = testing::ParseModelText(kResidual);
  Options options;
  options.num_ipus = 2;
  Plan plan;
  auto bytes = ShardModelBytes(model.SerializeAsString(), options, &plan);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(*bytes));
  EXPECT_EQ(out.graph().node(3).attribute(0).i(), 1);
  EXPECT_EQ(plan.proto.num_ipus(), 2);
  EXPECT_FALSE(ShardModelBytes("garbage", options).ok());
}

TEST(AutoshardTest, Fp16HalvesFloatWeightBytes) {
  onnx::ModelProto model = testing::ParseModelText(kResidual);
  Options options;
  options.num_ipus = 2;
  options.precision = Precision::kFp16;
  auto plan = PlanModel(model, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->proto.summary().total_weight_bytes(), 64);  // 2 x 16 x 2 B
}

TEST(AutoshardTest, AutoIsNeverWorseThanRawOrSearch) {
  const onnx::ModelProto model = testing::MakeTransformerLike(6, 64, 32);
  for (int k : {2, 3, 4}) {
    Options options;
    options.num_ipus = k;
    options.strategy = "raw";
    auto raw_on_ipu2 = PlanModel(model, options);
    ASSERT_TRUE(raw_on_ipu2.ok()) << raw_on_ipu2.status();
    // ipu2, then tiles that hold 80% of the raw split's fullest tile.
    for (int64_t tile_bytes :
         {int64_t{0}, testing::FullestTile(*raw_on_ipu2) * 8 / 10}) {
      if (tile_bytes > 0) options.device = testing::Ipu2WithTiles(tile_bytes);
      std::map<std::string, Plan> plans =
          testing::ExpectAutoNoWorse(model, options);
      ASSERT_EQ(plans.size(), 4u);
      // Without memory pressure optimal is never slower than PopRT's bytes
      // balance, and faster when 6 equal layers go onto 4 IPUs.
      if (tile_bytes == 0) {
        const double optimal_s =
            plans["optimal"].proto.performance().bottleneck_s();
        const double raw_s = plans["raw"].proto.performance().bottleneck_s();
        EXPECT_LE(optimal_s, raw_s * (1 + 1e-12));
        if (k == 4) {
          EXPECT_LT(optimal_s, raw_s * 0.95);
        }
      }
    }
  }
}

TEST(AutoshardTest, OptimalReportsItsOrderAndProvesItsBound) {
  const onnx::ModelProto model = testing::MakeTransformerLike(8, 64, 32);
  Options options;
  options.num_ipus = 4;
  options.strategy = "optimal";
  auto plan = PlanModel(model, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const proto::OptimalSummary& o = plan->proto.optimal();
  EXPECT_TRUE(o.fits());
  EXPECT_TRUE(o.complete());
  EXPECT_FALSE(o.order().empty());
  EXPECT_EQ(o.orders_size(), 3);  // subgraphs, topological, depth-first
  EXPECT_NEAR(o.bottleneck_s(), plan->proto.performance().bottleneck_s(),
              1e-12);
  for (const auto& order : o.orders())
    EXPECT_GE(order.bottleneck_s(), o.bottleneck_s() * (1 - 1e-12));
  // No split beats the lower bound; 8 equal layers on 4 IPUs come close.
  const auto& perf = plan->proto.performance();
  EXPECT_GE(perf.bottleneck_s(), perf.lower_bound_s());
  EXPECT_LT(perf.gap_percent(), 10);
}

TEST(AutoshardTest, NumIpusAutoTakesTheSmallestPowerOfTwoThatFits) {
  const onnx::ModelProto model = testing::MakeTransformerLike(8, 64, 32);
  Options options;  // num_ipus = kAutoIpus, strategy auto
  auto one = PlanModel(model, options);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->proto.num_ipus(), 1);  // it fits one ipu2
  EXPECT_THAT(one->proto.num_ipus_tried(), ElementsAre(1));
  // Tiles between the 2-IPU and the 1-IPU plans' fullest tiles.
  options.num_ipus = 2;
  auto two = PlanModel(model, options);
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_LT(testing::FullestTile(*two), testing::FullestTile(*one));
  options.device = testing::Ipu2WithTiles(
      (testing::FullestTile(*two) + testing::FullestTile(*one)) / 2);
  options.num_ipus = kAutoIpus;
  auto fitted = PlanModel(model, options);
  ASSERT_TRUE(fitted.ok()) << fitted.status();
  EXPECT_EQ(fitted->proto.num_ipus(), 2);
  EXPECT_TRUE(fitted->proto.fits());
  EXPECT_THAT(fitted->proto.num_ipus_tried(), ElementsAre(1, 2));
  // Tiles too small for anything: every power of two up to max_ipus is
  // tried, and the last plan is returned with a warning. But 1 IPU is
  // skipped: the weights, 8 x (12 x 64^2 + 2 x 64) x 4 = 1,576,960 bytes,
  // exceed its 1,472 x 1,000 = 1,472,000 bytes.
  options.device = testing::Ipu2WithTiles(1000);
  options.max_ipus = 8;
  auto none = PlanModel(model, options);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->proto.fits());
  EXPECT_THAT(none->proto.num_ipus_skipped(), ElementsAre(1));
  EXPECT_THAT(none->proto.num_ipus_tried(), ElementsAre(2, 4, 8));
  EXPECT_THAT(
      none->proto.warnings(),
      ::testing::Contains(HasSubstr("no power-of-two IPU count up to 8")));
}

TEST(AutoshardTest, AnEmptyGraphIsAnErrorForEveryIpuCount) {
  const onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] x) {
    })");
  Options options;  // --num-ipus auto
  EXPECT_EQ(PlanModel(model, options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.num_ipus = 2;
  EXPECT_EQ(PlanModel(model, options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(AutoshardTest, StrategyOptionsAreChecked) {
  Options options;
  options.strategy = "greedy";
  EXPECT_THAT(options.Validate().message(),
              HasSubstr("available: auto, optimal, search, raw"));
  options.strategy = "raw";
  options.optimal_perf = true;
  EXPECT_THAT(options.Validate().message(),
              HasSubstr("--optimal-perf needs --strategy search or auto"));
  options.strategy = "auto";
  EXPECT_TRUE(options.Validate().ok());
  options.compile_cmd = "true";  // compiles auto's splits afterwards
  EXPECT_TRUE(options.Validate().ok());
  options = Options();
  options.num_ipus = -1;
  EXPECT_THAT(options.Validate().message(), HasSubstr("at least 1 (or auto)"));
}

TEST(AutoshardTest, ValidateChecksTheValuesTheCliUsedToCheck) {
  Options options;
  options.available_memory_proportion = 0;  // set, so checked: not in (0, 1]
  EXPECT_EQ(options.Validate().message(),
            "--available-memory-proportion must be in (0, 1], got 0");
  options.available_memory_proportion = 1;
  EXPECT_TRUE(options.Validate().ok());
  options.available_memory_proportion.reset();  // the profile's
  EXPECT_TRUE(options.Validate().ok());
  options.jobs = 0;
  EXPECT_EQ(options.Validate().message(), "--jobs must be at least 1, got 0");
  // Without a compile command --jobs counts nothing: any strategy takes it.
  options.jobs = 2;
  options.strategy = "raw";
  EXPECT_TRUE(options.Validate().ok());
}

}  // namespace
}  // namespace autoshard
