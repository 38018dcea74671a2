#include "sharder/oracle/compile_oracle.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "graph/annotations.h"
#include "graph/model_io.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

// A candidate writer on the graph layer alone (the planner's goes through
// WriteOutputs: sharder/compile_judge_test.cc): `model` with each node's
// placement set, saved atomically.
CandidateWriter PlacementWriter(const onnx::ModelProto& model) {
  return [&model](const std::vector<int32_t>& ipu_of_node,
                  const std::filesystem::path& path,
                  const std::vector<std::filesystem::path>&) {
    onnx::ModelProto candidate = model;
    for (int i = 0; i < candidate.graph().node_size(); ++i) {
      SetPlacement(ipu_of_node[i], ipu_of_node[i],
                   candidate.mutable_graph()->mutable_node(i));
    }
    return SaveModel(candidate, path, "", {});
  };
}

TEST(CompileOracleTest, ParsesTheOutOfMemoryMessage) {
  CompileVerdict v = ParseCompilerOutput(
      1,
      "compiling\nOut of memory on tile 2955: 700123 bytes used but tiles only "
      "have "
      "638976 bytes of memory\nOut of memory on tile 3: 1 bytes used\n");
  EXPECT_FALSE(v.fits);
  EXPECT_EQ(v.tile, 2955);  // the first message: IPU 2955 / 1472 = 2 on a GC200
  EXPECT_EQ(v.bytes, 700123);
  EXPECT_TRUE(v.unparsable.empty());
}

TEST(CompileOracleTest, OtherFailuresAreUnparsable) {
  EXPECT_EQ(ParseCompilerOutput(
                1, "x\nCannot fit all variable data onto one or more tiles\n")
                .unparsable,
            "Cannot fit all variable data onto one or more tiles");
  EXPECT_EQ(
      ParseCompilerOutput(1, "Exchange code overflow on tile 3\n").unparsable,
      "Exchange code overflow on tile 3");
  EXPECT_EQ(
      ParseCompilerOutput(1, "symbol _poplar_start does not fit\n").unparsable,
      "symbol _poplar_start does not fit");
  CompileVerdict crash = ParseCompilerOutput(139, "Segmentation fault\n");
  EXPECT_FALSE(crash.fits);
  EXPECT_EQ(crash.tile, -1);
  EXPECT_EQ(crash.unparsable, "the compile command failed (exit 139)");
  EXPECT_TRUE(ParseCompilerOutput(0, "compiled\n").fits);
}

TEST(CompileOracleTest, ReadsFullestTileLines) {
  CompileVerdict v = ParseCompilerOutput(
      0,
      "compiled\nfullest tile 3: 500000 bytes\nfullest tile 1500: 1 bytes\n");
  EXPECT_TRUE(v.fits);
  ASSERT_EQ(v.fullest_tiles.size(), 2u);
  EXPECT_EQ(v.fullest_tiles[0], std::make_pair(int64_t{3}, int64_t{500000}));
  EXPECT_EQ(v.fullest_tiles[1], std::make_pair(int64_t{1500}, int64_t{1}));
}

// Eight candidates compiled four at a time (Compile's worker threads; TSan
// runs this test too). The command reports each candidate's file size as
// the overflow, so every verdict shows which candidate it came from:
// candidate i writes IPU numbers whose varints are i bytes longer in all
// (0, 200, 20000, 3000000, 300000000 take 1 to 5 bytes), and the IPU is also
// the stage attribute, so its file is 2 i bytes longer than candidate 0's.
TEST(CompileOracleTest, CandidatesCompiledOnFourThreadsKeepTheirOrder) {
  const onnx::ModelProto model =
      testing::ParseModelText(testing::kResidualModelText);  // 4 nodes
  const int32_t kWide[] = {0, 200, 20000, 3000000, 300000000};
  std::vector<std::vector<int32_t>> candidates;
  for (int i = 0; i < 8; ++i) {
    // Node 0 takes the first 4 extra bytes, node 1 the rest.
    candidates.push_back(
        {kWide[std::min(i, 4)], kWide[std::max(i - 4, 0)], 0, 0});
  }
  CompileOracle oracle(
      "echo \"Out of memory on tile 1: $(wc -c < {model}) bytes used\"; "
      "exit 1",
      PlacementWriter(model), "", {}, /*jobs=*/4);
  auto verdicts = oracle.Compile(candidates, 0.6);
  ASSERT_TRUE(verdicts.ok()) << verdicts.status();
  ASSERT_EQ(verdicts->size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ((*verdicts)[i].tile, 1);
    EXPECT_EQ((*verdicts)[i].bytes - (*verdicts)[0].bytes, 2 * i) << i;
  }
}

}  // namespace
}  // namespace autoshard
