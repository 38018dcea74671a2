#include "graph/naming.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

using ::testing::HasSubstr;

onnx::ModelProto FourRelus() {
  return testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] d) {
      a = Relu(x)
      b = Relu(a)
      c = Relu(b)
      d = Relu(c)
    })",
                                 /*name_nodes=*/false);
}

TEST(NamingTest, EmptyAndDuplicateNamesGetDeterministicNames) {
  onnx::ModelProto m = FourRelus();
  auto* g = m.mutable_graph();
  g->mutable_node(1)->set_name("x");
  g->mutable_node(2)->set_name("x");       // duplicate of node 1
  g->mutable_node(3)->set_name("Relu_0");  // the name node 0 would get
  auto r = AssignNodeNames(/*strict=*/false, g);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->renamed_empty, 1);
  EXPECT_EQ(r->renamed_duplicate, 1);
  // Node 0 would be Relu_0, but node 3 holds that name: Relu_0_1.
  EXPECT_EQ(g->node(0).name(), "Relu_0_1");
  EXPECT_EQ(g->node(1).name(), "x");
  EXPECT_EQ(g->node(2).name(), "x_1");
  EXPECT_EQ(g->node(3).name(), "Relu_0");
  // Running it again changes nothing.
  auto again = AssignNodeNames(false, g);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->renamed_empty + again->renamed_duplicate, 0);
}

TEST(NamingTest, ManyNodesSharingANameGetConsecutiveSuffixes) {
  onnx::ModelProto m = FourRelus();
  auto* g = m.mutable_graph();
  for (int i = 0; i < 4; ++i) g->mutable_node(i)->set_name("x");
  g->mutable_node(3)->set_name("x_2");  // a later node already holds x_2
  auto r = AssignNodeNames(/*strict=*/false, g);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(g->node(0).name(), "x");
  EXPECT_EQ(g->node(1).name(), "x_1");
  EXPECT_EQ(g->node(2).name(), "x_3");  // x_2 is taken by node 3
  EXPECT_EQ(g->node(3).name(), "x_2");
}

TEST(NamingTest, StrictNamesRefusesAndNamesTheOffenders) {
  onnx::ModelProto m = FourRelus();
  for (int i = 0; i < 4; ++i)
    m.mutable_graph()->mutable_node(i)->set_name("n" + std::to_string(i));
  m.mutable_graph()->mutable_node(2)->set_name("n1");
  m.mutable_graph()->mutable_node(3)->clear_name();
  auto r = AssignNodeNames(/*strict=*/true, m.mutable_graph());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("node #2 (Relu) repeats the name 'n1'"));
  EXPECT_THAT(r.status().message(), HasSubstr("node #3 (Relu) has no name"));
  EXPECT_EQ(m.graph().node(3).name(), "");  // nothing renamed
}

}  // namespace
}  // namespace autoshard
