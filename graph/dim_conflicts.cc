#include "graph/dim_conflicts.h"

#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/step_counts.h"
#include "graph/onnx_guard.h"
#include "graph/onnx_inference.h"
#include "graph/shape_values.h"
#include "graph/shapes.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace autoshard {
namespace {

// A node's error in ONNX's error-mode inference, or the Conv rule's.
struct Conflict {
  std::string node;
  std::string reason;
};

// The phrases of ONNX 1.12's inference errors that say dims disagree:
// mergeInDimensionInfo (Concat and every op that unifies dims), the
// broadcasting rule (elementwise ops, Expand, Where), MatMul's inner dims,
// Reshape's -1, Squeeze of a dim that is not 1, Split's sizes.
bool IsDimConflict(const std::string& message) {
  static const char* const kPhrases[] = {
      "Can't merge shape info", "Incompatible dimensions",
      "Dimension could not be inferred", "must be 1 instead of",
      "Mismatch between the sum of"};
  for (const char* p : kPhrases) {
    if (absl::StrContains(message, p)) return true;
  }
  return false;
}

// `model`'s graph with `inputs`, without value_info and the outputs' dims
// (inferred from the file's own inputs).
onnx::ModelProto WithInputs(const onnx::ModelProto& model,
                            const GraphInputs& inputs) {
  onnx::ModelProto copy = model;
  onnx::GraphProto* g = copy.mutable_graph();
  *g->mutable_input() = inputs;
  g->clear_value_info();
  for (auto& vi : *g->mutable_output()) {
    if (vi.type().has_tensor_type())
      vi.mutable_type()->mutable_tensor_type()->clear_shape();
  }
  return copy;
}

// Runs ONNX's inference in error mode on `model` (in place): the node errors
// it gathers, as "(op_type:OP, node name: NAME): [..Error] REASON" lines
// (onnx/shape_inference/implementation.cc, getErrorWithNodeInfo), by node
// name. nullopt when the inference stopped on another error.
std::optional<std::map<std::string, std::string>> NodeErrors(
    onnx::ModelProto* model) {
  absl::StatusOr<std::string> run =
      RunOnnxInference(model, InferencePurpose::kDimCheck);
  if (!run.ok()) return std::nullopt;
  std::map<std::string, std::string> errors;
  const std::string& text = *run;
  if (text.empty()) return errors;
  if (!absl::StrContains(text, "Shape inference error(s): ")) {
    return std::nullopt;
  }
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const size_t at = line.find(", node name: ");
    if (at == absl::string_view::npos) continue;
    const size_t end = line.find("): ", at);
    if (end == absl::string_view::npos) continue;
    const size_t start = at + sizeof(", node name: ") - 1;
    std::string reason(line.substr(end + 3));
    if (absl::StartsWith(reason, "[ShapeInferenceError] ")) {
      reason = reason.substr(sizeof("[ShapeInferenceError] ") - 1);
    }
    errors.emplace(std::string(line.substr(start, end - start)), reason);
  }
  return errors;
}

// Every main-graph tensor's dims in `model` after its inference (-1 for an
// unknown dim); tensors of unknown rank are left out.
std::map<std::string, std::vector<int64_t>> DimsOf(
    const onnx::ModelProto& model) {
  std::map<std::string, std::vector<int64_t>> out;
  auto add = [&](const onnx::ValueInfoProto& vi) {
    const TensorInfo info = TensorInfoFromType(vi.type());
    if (info.rank_known) out[vi.name()] = info.dims;
  };
  for (const auto& vi : model.graph().value_info()) add(vi);
  for (const auto& vi : model.graph().output()) add(vi);
  for (const auto& vi : model.graph().input()) add(vi);
  for (const auto& t : model.graph().initializer()) {
    out[t.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
  }
  return out;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::vector<std::string> parts;
  for (int64_t d : dims) parts.push_back(d < 0 ? "?" : absl::StrCat(d));
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}

int64_t GroupOf(const onnx::NodeProto& node) {
  for (const auto& a : node.attribute()) {
    if (a.name() == "group") return a.i();
  }
  return 1;
}

// Note [One check where dims meet]: ONNX 1.12's Conv inference does not
// compare the input's channels (dim 1) with the weight's (W[1] x group;
// ConvTranspose: W[0]). The Conv-like nodes of `model` whose channels
// disagree, by name.
std::map<std::string, std::string> ChannelConflicts(
    const onnx::ModelProto& model,
    const std::map<std::string, std::vector<int64_t>>& dims) {
  std::map<std::string, std::string> out;
  for (const auto& node : model.graph().node()) {
    const std::string& op = node.op_type();
    int w = -1;
    if (op == "Conv" || op == "ConvInteger" || op == "ConvTranspose") w = 1;
    if (op == "QLinearConv") w = 3;
    if (w < 0 || node.input_size() <= w || !node.domain().empty()) continue;
    auto x = dims.find(node.input(0));
    auto k = dims.find(node.input(w));
    if (x == dims.end() || k == dims.end() || x->second.size() < 2 ||
        k->second.size() < 2 || x->second[1] < 0 || k->second[0] < 0 ||
        k->second[1] < 0) {
      continue;
    }
    const bool transpose = op == "ConvTranspose";
    const int64_t want =
        transpose ? k->second[0] : k->second[1] * GroupOf(node);
    if (x->second[1] == want) continue;
    out[node.name()] = absl::StrCat(
        "its input has ", x->second[1], " channels (dim 1), its weight '",
        node.input(w), "' ", DimsText(k->second), " takes ", want,
        transpose ? "" : absl::StrCat(" (group ", GroupOf(node), ")"));
  }
  return out;
}

// The conflicts of `model` at its inputs' dims: ONNX's dim errors and the
// Conv rule's, by node name; nullopt when ONNX stopped on another error.
std::optional<std::map<std::string, std::string>> ConflictsOf(
    onnx::ModelProto* model) {
  auto errors = NodeErrors(model);
  if (!errors) return std::nullopt;
  std::map<std::string, std::string> out;
  for (auto& [node, reason] : *errors) {
    if (IsDimConflict(reason)) out[node] = "ONNX's shape inference: " + reason;
  }
  for (auto& [node, reason] : ChannelConflicts(*model, DimsOf(*model))) {
    out.emplace(node, reason);
  }
  return out;
}

// A small integer constant's values, "{2,16}", or "".
std::string ConstantText(const onnx::GraphProto& graph,
                         const std::string& name) {
  std::optional<ShapeValue> v;
  for (const auto& t : graph.initializer()) {
    if (t.name() == name) v = ValueFromTensor(t);
  }
  for (const auto& node : graph.node()) {
    if (node.op_type() == "Constant" && node.output_size() == 1 &&
        node.output(0) == name) {
      v = ConstantNodeValue(node);
    }
  }
  if (!v || v->is_float() || v->ints.size() > 8) return "";
  return absl::StrCat("{", absl::StrJoin(v->ints, ","), "}");
}

std::string InputsText(
    const onnx::GraphProto& graph, const onnx::NodeProto& node,
    const std::map<std::string, std::vector<int64_t>>& dims) {
  std::vector<std::string> parts;
  for (const std::string& in : node.input()) {
    if (in.empty()) continue;
    if (std::string c = ConstantText(graph, in); !c.empty()) {
      parts.push_back(absl::StrCat("'", in, "' = ", c));
      continue;
    }
    auto it = dims.find(in);
    parts.push_back(absl::StrCat(
        "'", in, "' ", it == dims.end() ? "[?]" : DimsText(it->second)));
  }
  return parts.size() == 1
             ? absl::StrCat("its input ", parts[0])
             : absl::StrCat("its inputs ", absl::StrJoin(parts, ", "));
}

}  // namespace

absl::Status CheckOptionDims(const onnx::ModelProto& model,
                             const GraphInputs& declared,
                             const std::string& cause) {
  onnx::ModelProto fixed = WithInputs(model, model.graph().input());
  auto conflicts = ConflictsOf(&fixed);
  if (!conflicts || conflicts->empty()) return absl::OkStatus();
  onnx::ModelProto as_declared = WithInputs(model, declared);
  auto before = ConflictsOf(&as_declared);
  if (!before) return absl::OkStatus();
  const auto dims = DimsOf(fixed);
  for (const auto& node : fixed.graph().node()) {  // the first in file order
    auto it = conflicts->find(node.name());
    if (it == conflicts->end() || before->contains(node.name())) continue;
    return absl::InvalidArgumentError(
        absl::StrCat(cause, ": node '", node.name(), "' (", node.op_type(),
                     ") cannot take the dims it makes: ",
                     InputsText(fixed.graph(), node, dims), "; ", it->second));
  }
  return absl::OkStatus();
}

}  // namespace autoshard
