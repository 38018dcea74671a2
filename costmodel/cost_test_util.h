// Helpers for the cost model's tests: ONNX text in, costs out.
#ifndef AUTOSHARD_COSTMODEL_COST_TEST_UTIL_H_
#define AUTOSHARD_COSTMODEL_COST_TEST_UTIL_H_

#include <string>
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "costmodel/cost_model.h"
#include "graph/graph.h"
#include "graph/shapes.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard::testing {

// Turns every value_info entry that no node produces and that is not a graph
// input into an initializer with its dims and no data, so that ONNX text can
// declare a weight as `<float[4,3,3,3] w>` (the cost model never reads a
// weight's data; the data may live in an external file).
inline void DeclaredValuesToInitializers(onnx::GraphProto* graph) {
  absl::flat_hash_set<std::string> defined;
  for (const auto& vi : graph->input()) defined.insert(vi.name());
  for (const auto& t : graph->initializer()) defined.insert(t.name());
  for (const auto& node : graph->node()) {
    for (const auto& out : node.output()) defined.insert(out);
  }
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (const auto& vi : graph->value_info()) {
    if (defined.contains(vi.name())) {
      *kept.Add() = vi;
      continue;
    }
    onnx::TensorProto* t = graph->add_initializer();
    t->set_name(vi.name());
    t->set_data_type(vi.type().tensor_type().elem_type());
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      t->add_dims(d.dim_value());
    }
  }
  graph->mutable_value_info()->Swap(&kept);
}

// Parses `text`, infers shapes and costs every node. Node i is the i-th node
// of the text ("n<i>").
inline ModelCosts CostsOf(std::string_view text,
                          Precision precision = Precision::kFp32) {
  onnx::ModelProto model = ParseModelText(text);
  DeclaredValuesToInitializers(model.mutable_graph());
  absl::Status inferred = InferShapes(&model);
  EXPECT_TRUE(inferred.ok()) << inferred;
  const TensorInfoMap tensors = CollectTensorInfo(model.graph());
  absl::StatusOr<Graph> graph = Graph::Build(model.graph());
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return {};
  CostOptions options;
  options.precision = precision;
  absl::StatusOr<ModelCosts> costs =
      ComputeCosts(model.graph(), *graph, tensors, options);
  EXPECT_TRUE(costs.ok()) << costs.status();
  return costs.ok() ? *std::move(costs) : ModelCosts{};
}

}  // namespace autoshard::testing

#endif  // AUTOSHARD_COSTMODEL_COST_TEST_UTIL_H_
