#include "sharder/oracle/compile_oracle.h"

#include "gtest/gtest.h"

namespace autoshard {
namespace {

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

}  // namespace
}  // namespace autoshard
