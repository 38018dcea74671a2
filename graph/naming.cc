#include "graph/naming.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/step_counts.h"

namespace autoshard {

absl::StatusOr<NamingResult> AssignNodeNames(bool strict,
                                             onnx::GraphProto* graph) {
  ++ThreadStepCounts().node_namings;
  NamingResult result;
  // Names in use: every non-empty name of the file, so a generated name can
  // never collide with a later node's own name.
  absl::flat_hash_set<std::string> taken;
  std::vector<int> needs_name;  // node indices to (re)name, in file order
  std::vector<std::string> offenders;
  for (int i = 0; i < graph->node_size(); ++i) {
    const onnx::NodeProto& node = graph->node(i);
    if (node.name().empty()) {
      needs_name.push_back(i);
      ++result.renamed_empty;
      offenders.push_back(
          absl::StrCat("node #", i, " (", node.op_type(), ") has no name"));
    } else if (!taken.insert(node.name()).second) {
      needs_name.push_back(i);
      ++result.renamed_duplicate;
      offenders.push_back(absl::StrCat("node #", i, " (", node.op_type(),
                                       ") repeats the name '", node.name(),
                                       "'"));
    }
  }
  if (strict && !offenders.empty()) {
    const size_t shown = std::min<size_t>(offenders.size(), 10);
    return absl::InvalidArgumentError(absl::StrCat(
        "--strict-names: every node needs a unique name; ", offenders.size(),
        " do not: ",
        absl::StrJoin(offenders.begin(), offenders.begin() + shown, "; "),
        offenders.size() > shown ? "; ..." : ""));
  }
  // Per base name, the next suffix to try: each name is tried once, so
  // naming is linear even when thousands of nodes share one name.
  absl::flat_hash_map<std::string, int> next_suffix;
  for (int i : needs_name) {
    onnx::NodeProto* node = graph->mutable_node(i);
    std::string base = node->name().empty()
                           ? absl::StrCat(node->op_type(), "_", i)
                           : node->name();
    std::string name = base;
    if (!taken.insert(name).second) {
      int& k = next_suffix.try_emplace(base, 1).first->second;
      do {
        name = absl::StrCat(base, "_", k++);
      } while (!taken.insert(name).second);
    }
    node->set_name(name);
  }
  return result;
}

}  // namespace autoshard
