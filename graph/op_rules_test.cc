// The one fallback table (issue 25, point 6): one entry per op, holding its
// shape rule and its type rule.
#include "graph/op_rules.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace autoshard {
namespace {

using ::testing::ElementsAre;

TEST(OpRulesTest, EveryOpHasOneEntryWithARule) {
  std::map<std::string, int> entries;
  for (const OpRule& rule : AllOpRules()) {
    ++entries[rule.op];
    EXPECT_TRUE(rule.shape != nullptr || rule.type != nullptr) << rule.op;
  }
  for (const auto& [op, n] : entries) EXPECT_EQ(n, 1) << op;
  // The lookup finds each entry itself.
  for (const OpRule& rule : AllOpRules()) {
    EXPECT_EQ(FindOpRule(rule.op), &rule) << rule.op;
  }
  EXPECT_EQ(FindOpRule("NoSuchOp"), nullptr);
}

// A fixed answer per input, for the type rules.
class FakeQuery : public TypeQuery {
 public:
  explicit FakeQuery(std::vector<ElemRank> inputs) : inputs_(inputs) {}
  ElemRank In(const onnx::NodeProto&, int i) const override {
    return i < static_cast<int>(inputs_.size()) ? inputs_[i] : ElemRank{};
  }
  int Length(const onnx::NodeProto&, int) const override { return -1; }
  int NumAxes(const onnx::NodeProto&) const override { return -1; }
  const onnx::TypeProto* Find(const std::string&) const override {
    return nullptr;
  }
  const onnx::TensorProto* FindInitializer(const std::string&) const override {
    return nullptr;
  }

 private:
  std::vector<ElemRank> inputs_;
};

// NonZero's entry holds both of its rules: x float[2,3] gives int64 indices
// [rank 2, at most 2 x 3 = 6 elements], of type int64 and rank 2.
TEST(OpRulesTest, NonZeroHasItsShapeAndTypeRule) {
  onnx::NodeProto node;
  node.set_op_type("NonZero");
  node.add_input("x");
  node.add_output("i");
  TensorInfo x;
  x.elem_type = onnx::TensorProto::FLOAT;
  x.rank_known = true;
  x.dims = {2, 3};
  const std::vector<DerivedOutput> outs =
      DeriveOutputShapes(RuleNode{node, {&x}, {nullptr}});
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].info.elem_type, onnx::TensorProto::INT64);
  EXPECT_THAT(outs[0].info.dims, ElementsAre(2, 6));
  const OpRule* rule = FindOpRule("NonZero");
  ASSERT_NE(rule, nullptr);
  ASSERT_NE(rule->type, nullptr);
  const std::vector<ElemRank> types =
      rule->type(FakeQuery({{onnx::TensorProto::FLOAT, 2}}), node);
  ASSERT_EQ(types.size(), 1u);
  EXPECT_EQ(types[0].elem, onnx::TensorProto::INT64);
  EXPECT_EQ(types[0].rank, 2);
}

// A shape rule holds in its entry's domain only: com.microsoft's
// LayerNormalization (axis -1) on [2,4] gives [2,4] and statistics [2,1];
// ONNX's own LayerNormalization has ONNX's inference, no rule here. The
// type rule (output 0 as input 0) holds in both.
TEST(OpRulesTest, ShapeRulesKeepToTheirDomain) {
  onnx::NodeProto node;
  node.set_op_type("LayerNormalization");
  node.add_input("x");
  node.add_output("y");
  node.add_output("mean");
  TensorInfo x;
  x.elem_type = onnx::TensorProto::FLOAT;
  x.rank_known = true;
  x.dims = {2, 4};
  const RuleNode rule_node{node, {&x}, {nullptr}};
  std::vector<DerivedOutput> onnx_outs = DeriveOutputShapes(rule_node);
  ASSERT_EQ(onnx_outs.size(), 2u);
  EXPECT_FALSE(onnx_outs[0].info.rank_known);
  node.set_domain("com.microsoft");
  std::vector<DerivedOutput> ms_outs = DeriveOutputShapes(rule_node);
  ASSERT_EQ(ms_outs.size(), 2u);
  EXPECT_THAT(ms_outs[0].info.dims, ElementsAre(2, 4));
  EXPECT_THAT(ms_outs[1].info.dims, ElementsAre(2, 1));
  const std::vector<ElemRank> types =
      FindOpRule("LayerNormalization")->type(FakeQuery({{1, 2}}), node);
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[0].rank, 2);
  EXPECT_EQ(types[1].rank, -1);  // statistics: unknown to the type rule
}

}  // namespace
}  // namespace autoshard
