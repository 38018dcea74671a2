// What the shape propagation tests share (graph/shape_propagation_test.cc,
// graph/shape_propagation_control_test.cc): a model propagated from ONNX
// text, with its tensors' shapes before and after the pass.
#ifndef AUTOSHARD_TESTS_SHAPE_PROPAGATION_FIXTURE_H_
#define AUTOSHARD_TESTS_SHAPE_PROPAGATION_FIXTURE_H_

#include <string>
#include <utility>
#include <vector>

#include "graph/shape_propagation.h"
#include "graph/shapes.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard::testing {

// A model after ONNX's inference alone (`before`) and after the pass too.
struct Propagated {
  onnx::ModelProto model;
  TensorInfoMap before, after;
  ShapePropagationResult result;

  // Dims of `name` in the main graph after the pass; {-99} when the rank is
  // unknown.
  std::vector<int64_t> Dims(const std::string& name) const {
    auto it = after.find(name);
    if (it == after.end() || !it->second.rank_known) return {-99};
    return it->second.dims;
  }
  bool StaticBefore(const std::string& name) const {
    auto it = before.find(name);
    return it != before.end() && it->second.IsStatic();
  }
};

inline Propagated PropagateModel(onnx::ModelProto model) {
  Propagated p;
  p.model = std::move(model);
  EXPECT_TRUE(InferShapes(&p.model).ok());
  p.before = CollectTensorInfo(p.model.graph());
  p.result = PropagateShapes(&p.model);
  p.after = CollectTensorInfo(p.model.graph());
  return p;
}

inline Propagated Propagate(const std::string& text) {
  return PropagateModel(ParseModelText(text));
}

// The value_info dims of `name` in `body` (a node's graph attribute).
inline std::vector<int64_t> BodyDims(const onnx::GraphProto& body,
                                     const std::string& name) {
  const TensorInfoMap infos = CollectTensorInfo(body);
  auto it = infos.find(name);
  if (it == infos.end() || !it->second.rank_known) return {-99};
  return it->second.dims;
}

}  // namespace autoshard::testing

#endif  // AUTOSHARD_TESTS_SHAPE_PROPAGATION_FIXTURE_H_
