// The model-local functions' calls (graph/onnx_guard.h): ONNX 1.12's
// inference recurses into each call, so a function that calls itself, or a
// chain deeper than kMaxFunctionDepth, is refused before it runs.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/onnx_guard.h"
#include "graph/onnx_guard_internal.h"

namespace autoshard::guard_internal {
namespace {

// The model-local functions each function's nodes call (in nested bodies
// too), by index.
std::vector<std::vector<int>> FunctionCalls(const onnx::ModelProto& model) {
  std::map<std::pair<std::string, std::string>, int> index;
  for (int i = 0; i < model.functions_size(); ++i) {
    index[{model.functions(i).domain(), model.functions(i).name()}] = i;
  }
  std::vector<std::vector<int>> calls(model.functions_size());
  for (int i = 0; i < model.functions_size(); ++i) {
    std::vector<const onnx::NodeProto*> nodes;
    for (const auto& n : model.functions(i).node()) nodes.push_back(&n);
    // Bodies are bounded by CheckGraphs, which runs first.
    while (!nodes.empty()) {
      const onnx::NodeProto* n = nodes.back();
      nodes.pop_back();
      auto it = index.find({n->domain(), n->op_type()});
      if (it != index.end()) calls[i].push_back(it->second);
      for (const auto& a : n->attribute()) {
        for (const auto& b : a.graphs())
          for (const auto& m : b.node()) nodes.push_back(&m);
        if (a.has_g())
          for (const auto& m : a.g().node()) nodes.push_back(&m);
      }
    }
  }
  return calls;
}

}  // namespace

// Refuses a function that calls itself, directly or through others, and
// call chains deeper than kMaxFunctionDepth (iterative depth-first search).
absl::Status CheckFunctionCalls(const onnx::ModelProto& model) {
  const std::vector<std::vector<int>> calls = FunctionCalls(model);
  const int n = static_cast<int>(calls.size());
  std::vector<int> state(n, 0);  // 0 new, 1 on the path, 2 done
  std::vector<int> depth(n, 1);  // the longest call chain from it
  for (int root = 0; root < n; ++root) {
    if (state[root] != 0) continue;
    std::vector<std::pair<int, size_t>> path = {{root, 0}};
    state[root] = 1;
    while (!path.empty()) {
      auto& [f, next] = path.back();
      if (next < calls[f].size()) {
        const int g = calls[f][next++];
        if (state[g] == 1) {
          std::vector<std::string> names;
          for (const auto& [h, unused] : path)
            names.push_back(model.functions(h).name());
          names.push_back(model.functions(g).name());
          return absl::InvalidArgumentError(absl::StrCat(
              "function '", model.functions(g).name(), "' calls itself (",
              absl::StrJoin(names, " -> "), "): ONNX cannot infer its shapes"));
        }
        if (state[g] == 0) {
          state[g] = 1;
          path.push_back({g, 0});
        }
        continue;
      }
      for (int g : calls[f]) depth[f] = std::max(depth[f], depth[g] + 1);
      if (depth[f] > kMaxFunctionDepth) {
        return absl::InvalidArgumentError(absl::StrCat(
            "function '", model.functions(f).name(), "' calls functions ",
            depth[f], " deep; autoshard's limit is ", kMaxFunctionDepth));
      }
      state[f] = 2;
      path.pop_back();
    }
  }
  return absl::OkStatus();
}

}  // namespace autoshard::guard_internal
