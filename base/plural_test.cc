#include "base/plural.h"

#include "gtest/gtest.h"

namespace autoshard {
namespace {

TEST(PluralTest, OneIsSingularEveryOtherCountPlural) {
  EXPECT_EQ(Plural(1, "model"), "1 model");
  EXPECT_EQ(Plural(0, "model"), "0 models");
  EXPECT_EQ(Plural(2, "file"), "2 files");
  EXPECT_EQ(Plural(1, "node has", "nodes have"), "1 node has");
  EXPECT_EQ(Plural(3, "node has", "nodes have"), "3 nodes have");
}

}  // namespace
}  // namespace autoshard
