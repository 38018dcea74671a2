#include "graph/batch_axis.h"

#include <optional>
#include <set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "graph/shape_values.h"

namespace autoshard {
namespace {

// How many rank-keeping ops the search follows from an input.
constexpr int kMaxDepth = 8;

// Ops whose output has its data input's rank when every other input is a
// constant of no higher rank (a normalization before the batch axis).
bool KeepsRank(const std::string& op) {
  static const absl::flat_hash_set<std::string> kOps = {
      "Sub",  "Div",  "Mul",        "Add",   "Cast",    "Identity", "Relu",
      "Clip", "Sqrt", "Neg",        "Abs",   "Sigmoid", "Tanh",     "Exp",
      "Log",  "Pow",  "Reciprocal", "Floor", "Ceil",    "Round"};
  return kOps.contains(op);
}

class Finder {
 public:
  explicit Finder(const onnx::GraphProto& graph) {
    for (const auto& t : graph.initializer()) {
      constants_.emplace(t.name(), ValueFromTensor(t));
    }
    for (const auto& node : graph.node()) {
      for (const std::string& in : node.input()) {
        if (!in.empty()) readers_[in].push_back(&node);
      }
      if (node.op_type() == "Constant" && node.output_size() == 1) {
        constants_.emplace(node.output(0), ConstantNodeValue(node));
      }
    }
  }

  // The Unsqueeze adding a leading axis to `tensor` of `rank`, or "".
  std::string LeadingUnsqueeze(const std::string& tensor, int64_t rank,
                               int depth) const {
    auto it = readers_.find(tensor);
    if (it == readers_.end() || depth > kMaxDepth) return "";
    for (const onnx::NodeProto* node : it->second) {
      if (node->op_type() == "Unsqueeze" && node->input(0) == tensor &&
          AddsLeadingAxis(*node, rank)) {
        return node->name();
      }
      if (!KeepsRank(node->op_type()) || node->output_size() != 1 ||
          !OthersConstant(*node, tensor)) {
        continue;
      }
      std::string found = LeadingUnsqueeze(node->output(0), rank, depth + 1);
      if (!found.empty()) return found;
    }
    return "";
  }

 private:
  bool OthersConstant(const onnx::NodeProto& node,
                      const std::string& tensor) const {
    for (const std::string& in : node.input()) {
      if (in == tensor || in.empty()) continue;
      if (!constants_.contains(in)) return false;
    }
    return true;
  }

  bool AddsLeadingAxis(const onnx::NodeProto& node, int64_t rank) const {
    std::vector<int64_t> axes;
    for (const auto& a : node.attribute()) {
      if (a.name() == "axes") axes.assign(a.ints().begin(), a.ints().end());
    }
    if (node.input_size() > 1) {
      auto c = constants_.find(node.input(1));
      if (c == constants_.end() || !c->second) return false;
      axes = c->second->ints;
    }
    const int64_t out_rank = rank + static_cast<int64_t>(axes.size());
    for (int64_t a : axes) {
      if (a == 0 || a == -out_rank) return true;
    }
    return false;
  }

  absl::flat_hash_map<std::string, std::vector<const onnx::NodeProto*>>
      readers_;
  absl::flat_hash_map<std::string, std::optional<ShapeValue>> constants_;
};

}  // namespace

std::map<std::string, std::string> InputsWithoutBatchAxis(
    const onnx::GraphProto& graph) {
  std::map<std::string, std::string> out;
  const Finder finder(graph);
  for (const auto& vi : graph.input()) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) {
      continue;
    }
    const int64_t rank = vi.type().tensor_type().shape().dim_size();
    if (rank == 0) continue;
    std::string node = finder.LeadingUnsqueeze(vi.name(), rank, 0);
    if (!node.empty()) out[vi.name()] = node;
  }
  return out;
}

}  // namespace autoshard
