// Issue 25 point 5: a large weight that ONNX's inference sees as a Gather's
// data input (GPT-2's wte.weight, tied to the output head) raised the false
// warning "constant input 'wte.weight' has dims [...] but stores 0 values"
// and switched ONNX's inference off: the guard judged the copy made for
// inference, which leaves large weights' data out (Note [A stripped weight is
// marked external], graph/shape_analysis.h). Here the weight is 20 MiB,
// stored inline (raw_data) and as external data.
#include <algorithm>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sharder/autoshard.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// ids int64[1,8] -> Gather(wte) [1,8,1024] -> MatMul(Transpose(wte))
// [1,8,5120]: a tied embedding of 5120 x 1024 floats (20 MiB).
onnx::ModelProto TiedEmbedding(bool external) {
  onnx::ModelProto m = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (int64[1,8] ids) => (float[1,8,5120] logits) {
      h = Gather(wte, ids)
      head = Transpose<perm = [1, 0]>(wte)
      logits = MatMul(h, head)
    })");
  onnx::TensorProto* w = m.mutable_graph()->add_initializer();
  w->set_name("wte");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(5120);
  w->add_dims(1024);
  if (external) {
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* kv = w->add_external_data();
    kv->set_key("location");
    kv->set_value("m.onnx.data");
  } else {
    w->set_raw_data(std::string(size_t{5120} * 1024 * 4, '\0'));
  }
  return m;
}

void ExpectOnnxInferenceOn(bool external) {
  Options options;
  options.num_ipus = 1;
  absl::StatusOr<Plan> plan = PlanModel(TiedEmbedding(external), options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const std::string& w : plan->proto.warnings()) {
    EXPECT_THAT(w, Not(HasSubstr("stores 0 values")));
    EXPECT_THAT(w, Not(HasSubstr("using the shapes the file records")));
  }
  // MatMul [1,8,1024] x [1024,5120]: 2 x 8 x 1024 x 5120 = 83,886,080
  // FLOPs, the largest node's.
  double most = 0;
  for (const auto& ipu : plan->proto.ipus()) most = std::max(most, ipu.flops());
  EXPECT_GE(most, 83886080.0);
}

TEST(TiedEmbeddingTest, InlineWeightKeepsOnnxInference) {
  ExpectOnnxInferenceOn(/*external=*/false);
}

TEST(TiedEmbeddingTest, ExternalWeightKeepsOnnxInference) {
  ExpectOnnxInferenceOn(/*external=*/true);
}

}  // namespace
}  // namespace autoshard
