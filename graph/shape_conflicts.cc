#include "graph/shape_conflicts.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/shape_values.h"

namespace autoshard {
namespace {

// The value of every initializer and Constant output of `graph` that is an
// integer tensor small enough to hold (shape_values.h).
std::map<std::string, ShapeValue> IntegerConstants(
    const onnx::GraphProto& graph) {
  std::map<std::string, ShapeValue> out;
  auto keep = [&](const std::string& name, std::optional<ShapeValue> v) {
    if (v && !v->is_float()) out[name] = std::move(*v);
  };
  for (const auto& t : graph.initializer()) keep(t.name(), ValueFromTensor(t));
  for (const auto& node : graph.node()) {
    if (node.op_type() == "Constant" && node.output_size() == 1 &&
        node.domain().empty()) {
      keep(node.output(0), ConstantNodeValue(node));
    }
  }
  return out;
}

bool AllowZero(const onnx::NodeProto& node) {
  for (const auto& a : node.attribute()) {
    if (a.name() == "allowzero") return a.i() != 0;
  }
  return false;
}

// True when Reshape can give `target` from `in` (static) under ONNX's rules.
bool ReshapeFits(const TensorInfo& in, const std::vector<int64_t>& target,
                 bool allow_zero) {
  const int64_t elements = in.NumElementsOr1();
  int64_t product = 1;
  int inferred = 0;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == -1) {
      ++inferred;
      continue;
    }
    if (d == 0 && !allow_zero) {
      if (i >= in.dims.size()) return false;
      d = in.dims[i];
    }
    if (d < 0) return false;
    product = SaturatingMul(product, d);
  }
  if (inferred > 1) return false;
  if (inferred == 0) return product == elements;
  return product > 0 && elements % product == 0;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

}  // namespace

absl::Status CheckReshapeConstants(const onnx::GraphProto& graph,
                                   const TensorInfoMap& tensors) {
  const std::map<std::string, ShapeValue> constants = IntegerConstants(graph);
  for (const auto& node : graph.node()) {
    if (node.op_type() != "Reshape" || !node.domain().empty() ||
        node.input_size() < 2) {
      continue;
    }
    auto shape = constants.find(node.input(1));
    auto in = tensors.find(node.input(0));
    if (shape == constants.end() || shape->second.dims.size() != 1 ||
        in == tensors.end() || !in->second.IsStatic()) {
      continue;
    }
    const std::vector<int64_t>& target = shape->second.ints;
    if (ReshapeFits(in->second, target, AllowZero(node))) continue;
    return absl::InvalidArgumentError(
        absl::StrCat("node '", node.name(), "' (Reshape) hard-codes the shape ",
                     DimsText(target), " (constant '", node.input(1),
                     "'), which contradicts its input '", node.input(0), "' ",
                     DimsText(in->second.dims), " (",
                     in->second.NumElementsOr1(), " elements)"));
  }
  return absl::OkStatus();
}

}  // namespace autoshard
