#include "sharder/assumptions.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/plural.h"
#include "writers/assumed_text.h"

namespace autoshard {
namespace internal {

void AddAssumptions(
    const Prepared& p,
    google::protobuf::RepeatedPtrField<proto::ShapeAssumption>* out) {
  for (const UnresolvedDim& d : p.unresolved_dims) {
    proto::ShapeAssumption* a = out->Add();
    a->set_tensor(d.input);
    a->set_dim(d.dim);
    a->set_value(1);
    a->set_dim_name(d.name);
    a->set_reason("input dim neither the model nor an option fixes: 1 assumed");
  }
  AddDataDependentAssumptions(p, out);
}

void AddDataDependentAssumptions(
    const Prepared& p,
    google::protobuf::RepeatedPtrField<proto::ShapeAssumption>* out) {
  for (const ShapeAssumption& s : p.shape_assumptions) {
    proto::ShapeAssumption* a = out->Add();
    a->set_node(s.node);
    a->set_op_type(s.op_type);
    a->set_tensor(s.tensor);
    a->set_dim(s.dim);
    a->set_value(s.value);
    a->set_reason(s.reason);
  }
}

namespace {

// At most this many unresolved nodes are named (the count says the rest).
constexpr int kNodesNamed = 20;

// The flags that fix `p`'s assumed input dims to the values costed: one
// --dim per symbolic name, one --input-shape per input with unnamed dims.
std::vector<std::string> DimFlags(const Prepared& p) {
  std::vector<std::string> flags;
  std::set<std::string> names, inputs;
  for (const UnresolvedDim& d : p.unresolved_dims) {
    if (!d.name.empty()) {
      if (names.insert(d.name).second)
        flags.push_back(absl::StrCat("--dim ", d.name, "=1"));
      continue;
    }
    if (!inputs.insert(d.input).second) continue;
    for (const auto& vi : p.analysis->model->graph().input()) {
      if (vi.name() != d.input) continue;
      std::vector<int64_t> dims;
      for (const auto& dim : vi.type().tensor_type().shape().dim())
        dims.push_back(dim.has_dim_value() ? dim.dim_value() : 1);
      flags.push_back(absl::StrCat("--input-shape ", d.input, ":",
                                   absl::StrJoin(dims, ",")));
    }
  }
  return flags;
}

}  // namespace

proto::ShapesVerdict MakeShapesVerdict(const Prepared& p) {
  proto::ShapesVerdict v;
  for (std::string& flag : DimFlags(p)) v.add_dim_flags(std::move(flag));
  v.set_data_dependent_dims(static_cast<int32_t>(p.shape_assumptions.size()));
  const ModelAnalysis& a = *p.analysis;
  for (size_t node = 0; node < a.costs.nodes.size(); ++node) {
    const NodeCost& c = a.costs.nodes[node];
    if (c.shapes_known || c.is_constant) continue;
    if (v.unresolved_nodes_size() < kNodesNamed)
      v.add_unresolved_nodes(a.problem.names[node]);
    v.set_unresolved_node_count(v.unresolved_node_count() + 1);
  }
  if (v.unresolved_node_count() > 0) {
    v.set_verdict("unresolved");
  } else if (!p.unresolved_dims.empty() || !p.shape_assumptions.empty()) {
    v.set_verdict("assumed");
  } else {
    v.set_verdict("exact");
  }
  return v;
}

absl::Status CheckStrictShapes(const proto::ShapesVerdict& v,
                               const Prepared& p) {
  if (v.verdict() == "exact") return absl::OkStatus();
  if (v.verdict() == "unresolved") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--strict: ",
        Plural(v.unresolved_node_count(), "node has", "nodes have"),
        " tensors whose dims no inference found (costed as 1, so FLOPs and "
        "memory may be too low): ",
        UnresolvedNodesText(v),
        "; fix the input dims they depend on (--input-shape, --dim), or "
        "drop --strict"));
  }
  google::protobuf::RepeatedPtrField<proto::ShapeAssumption> assumed;
  AddAssumptions(p, &assumed);
  return absl::InvalidArgumentError(absl::StrCat(
      "--strict: the figures assume dims that are not the model's own: ",
      AssumedText(assumed),
      v.dim_flags_size() > 0 ? absl::StrCat("; to plan with them, pass ",
                                            absl::StrJoin(v.dim_flags(), " "))
                             : "",
      v.data_dependent_dims() > 0
          ? "; data-dependent dims (NonZero...) cannot be fixed by a flag: "
            "drop --strict to plan with the bound the graph implies"
          : ""));
}

}  // namespace internal

}  // namespace autoshard
