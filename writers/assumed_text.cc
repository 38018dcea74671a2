#include "writers/assumed_text.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/plural.h"

namespace autoshard {

std::string AssumedText(
    const google::protobuf::RepeatedPtrField<proto::ShapeAssumption>& a) {
  constexpr size_t kListed = 4;
  std::vector<std::string> parts;
  for (const proto::ShapeAssumption& s : a) {
    std::string dim = s.dim_name().empty()
                          ? absl::StrCat(s.tensor(), "[", s.dim(), "]")
                          : s.dim_name();
    absl::StrAppend(&dim, "=", s.value());
    if (!s.node().empty())
      absl::StrAppend(&dim, " (", s.op_type(), " ", s.node(), ")");
    // Two inputs sharing a symbolic dim ("batch") assume it once.
    if (std::find(parts.begin(), parts.end(), dim) == parts.end())
      parts.push_back(std::move(dim));
  }
  if (parts.size() > kListed) {
    const size_t more = parts.size() - kListed;
    parts.resize(kListed);
    parts.push_back(absl::StrCat("and ", more, " more"));
  }
  return absl::StrJoin(parts, ", ");
}

std::string UnresolvedNodesText(const proto::ShapesVerdict& v) {
  const int64_t more = v.unresolved_node_count() - v.unresolved_nodes_size();
  return absl::StrCat(absl::StrJoin(v.unresolved_nodes(), ", "),
                      more > 0 ? absl::StrCat(" and ", more, " more") : "");
}

std::string ShapesText(
    const proto::ShapesVerdict& v,
    const google::protobuf::RepeatedPtrField<proto::ShapeAssumption>&
        assumptions) {
  if (v.verdict() == "unresolved") {
    return absl::StrCat(
        "unresolved: ",
        Plural(v.unresolved_node_count(), "node has", "nodes have"),
        " dims no inference found, costed as 1 (", UnresolvedNodesText(v),
        "): FLOPs and memory may be too low");
  }
  if (v.verdict() == "assumed") {
    return absl::StrCat(
        "assumed: ", AssumedText(assumptions), " (not the model's own",
        v.dim_flags_size() > 0 ? absl::StrCat("; set them, e.g. ",
                                              absl::StrJoin(v.dim_flags(), " "))
                               : "",
        ")");
  }
  return v.verdict().empty() ? "exact" : v.verdict();
}

std::string FitsCaveat(const proto::ShapesVerdict& v) {
  if (v.verdict() != "unresolved") return "";
  return absl::StrCat(", on unresolved dims (",
                      Plural(v.unresolved_node_count(), "node", "nodes"),
                      " costed as 1)");
}

}  // namespace autoshard
