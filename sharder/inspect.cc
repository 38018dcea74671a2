#include "sharder/inspect.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/plural.h"
#include "base/status_macros.h"
#include "costmodel/device_model.h"
#include "costmodel/flops_rules.h"
#include "costmodel/plan_evaluation.h"
#include "sharder/assumptions.h"
#include "sharder/carried_placement.h"
#include "sharder/inspect_tables.h"
#include "sharder/ipu_summaries.h"
#include "sharder/plan_model.h"
#include "sharder/plan_prepared.h"
#include "sharder/prepare.h"
#include "writers/emit.h"

namespace autoshard {
namespace {

// The placement the model carries, evaluated as --keep-placement does.
void AddCarriedPlacement(internal::Prepared& p, const Options& options,
                         proto::InspectReport* r) {
  const internal::CarriedPlacement carried = internal::ReadCarriedPlacement(p);
  if (carried.annotated_nodes == 0) return;
  proto::FoundPlacement* out = r->mutable_placement();
  out->set_annotated_nodes(carried.annotated_nodes);
  out->set_num_ipus(carried.num_ipus);
  out->set_num_stages(carried.num_stages);
  absl::StatusOr<Plan> plan = internal::PlanCarriedPlacement(
      p, options, carried, std::chrono::steady_clock::now());
  if (!plan.ok()) {
    out->set_error(std::string(plan.status().message()));
    return;
  }
  out->set_fits(plan->proto.fits());
  out->set_bottleneck_s(plan->proto.performance().bottleneck_s());
}

// The fewest IPUs, planned as `shard --num-ipus auto` plans.
absl::Status AddFewestIpus(const internal::Prepared& p, const Options& options,
                           proto::InspectReport* r) {
  Options planning = options;
  planning.bound_s = 0;  // the certified bound is not reported
  ASSIGN_OR_RETURN(Plan plan, internal::PlanFewestIpus(p, planning));
  r->set_min_ipus_strategy(plan.proto.strategy());
  if (plan.proto.fits()) r->set_min_ipus(plan.proto.num_ipus());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<proto::InspectReport> InspectModel(const onnx::ModelProto& model,
                                                  const Options& options) {
  ASSIGN_OR_RETURN(internal::Prepared p, internal::Prepare(model, options));
  proto::InspectReport r;
  internal::AddTensorsAndNodes(p, &r);
  internal::AddAssumptions(p, r.mutable_assumptions());
  *r.mutable_shapes() = internal::MakeShapesVerdict(p);
  const ShardingProblem& problem = p.analysis->problem;
  const int n = problem.num_nodes();
  r.set_num_nodes(n);
  r.set_ir_version(model.ir_version());
  for (const auto& opset : model.opset_import()) {
    if (IsDefaultDomain(opset.domain())) r.set_opset(opset.version());
  }
  r.set_device(p.analysis->device.name());
  r.set_precision(internal::PrecisionName(options.precision));
  r.set_batch_size(static_cast<int32_t>(p.analysis->batch));
  r.set_total_flops(p.analysis->costs.total_flops);
  r.set_total_weight_bytes(p.analysis->costs.total_weight_bytes);
  int64_t parameters = 0;
  for (const Weight& w : p.analysis->costs.weights)
    parameters += w.num_elements;
  r.set_parameters(parameters);

  // Per op type; each weight counted at its first reader.
  std::map<std::string, proto::OpTypeSummary> by_type;
  std::vector<bool> counted(p.analysis->costs.weights.size(), false);
  double macs = 0;
  int64_t heavy_unknown = 0;
  for (NodeId id = 0; id < n; ++id) {
    const NodeCost& c = p.analysis->costs.nodes[id];
    proto::OpTypeSummary& t = by_type[OpLabel(p.analysis->dag.node(id))];
    t.set_count(t.count() + 1);
    t.set_flops(t.flops() + c.flops);
    t.set_macs(t.macs() + c.macs);
    t.set_has_flops_rule(c.has_flops_rule);
    for (int32_t w : p.analysis->costs.node_weights[id]) {
      if (counted[w]) continue;
      counted[w] = true;
      t.set_weight_bytes(t.weight_bytes() +
                         p.analysis->costs.weights[w].size_bytes);
    }
    macs += c.macs;
    if (!c.shapes_known && IsHeavyOpClass(c.op_class)) ++heavy_unknown;
    if (!c.output_shapes_static) {
      r.set_nodes_without_static_shape(r.nodes_without_static_shape() + 1);
      r.add_nodes_without_static_shape_names(p.analysis->dag.name(id));
      if (IsHeavyOpClass(c.op_class)) {
        r.add_heavy_nodes_without_static_shape(p.analysis->dag.name(id));
      }
    }
  }
  internal::AddDataDependentAssumptions(p, r.mutable_shape_assumptions());
  r.set_total_macs(macs);
  std::vector<proto::OpTypeSummary> types;
  for (auto& [label, t] : by_type) {
    t.set_op_type(label);
    types.push_back(t);
  }
  std::stable_sort(
      types.begin(), types.end(),
      [](const auto& a, const auto& b) { return a.flops() > b.flops(); });
  for (auto& t : types) *r.add_op_types() = std::move(t);
  for (const auto& op : p.analysis->costs.ops_without_rule)
    r.add_ops_without_rule(op);
  r.set_nodes_with_unknown_shapes(p.analysis->costs.nodes_with_unknown_shapes);
  r.set_heavy_nodes_with_unknown_shapes(heavy_unknown);
  for (const internal::UnresolvedDim& d : p.unresolved_dims) {
    proto::UnresolvedDim* u = r.add_unresolved_dims();
    u->set_input(d.input);
    u->set_dim(d.dim);
    u->set_name(d.name);
  }

  const DeviceModel& device = p.analysis->device_model();
  *r.mutable_single_ipu_memory() =
      MemoryProto(device.EvaluateMemory(std::vector<int32_t>(n, 0), 0), 0,
                  p.analysis->device);
  RETURN_IF_ERROR(AddFewestIpus(p, options, &r));
  AddCarriedPlacement(p, options, &r);
  for (const auto& w : p.warnings) r.add_warnings(w);
  return r;
}

namespace {

// The model, its compute and weights, and how it sits on one IPU and on
// the fewest.
std::string SummaryText(const proto::InspectReport& r) {
  std::string out;
  absl::StrAppendFormat(&out, "model: %s   nodes: %d   IR %d   opset %d\n",
                        r.model(), r.num_nodes(), r.ir_version(), r.opset());
  absl::StrAppendFormat(&out, "precision: %s   batch: %d   device: %s\n",
                        r.precision(), std::max(r.batch_size(), 1), r.device());
  absl::StrAppend(&out, "shapes: ", ShapesText(r.shapes(), r.assumptions()),
                  "\n");
  absl::StrAppend(&out, internal::TensorsText(r));
  absl::StrAppendFormat(&out, "compute: %s (%.4g MACs in contractions)\n",
                        HumanFlopsText(r.total_flops()), r.total_macs());
  absl::StrAppendFormat(&out, "weights: %s in %d parameters\n",
                        HumanBytesText(r.total_weight_bytes()), r.parameters());
  const proto::IpuMemory& m = r.single_ipu_memory();
  absl::StrAppendFormat(
      &out, "on one IPU: peak activations %s, total %s, fullest tile %s (%s)\n",
      HumanBytesText(m.activation_bytes()), HumanBytesText(m.total_bytes()),
      HumanBytesText(m.max_tile_bytes()),
      m.fits() ? absl::StrCat("fits", FitsCaveat(r.shapes())) : "does not fit");
  if (r.min_ipus() > 0) {
    absl::StrAppendFormat(&out,
                          "fewest IPUs: %d (planned as shard --num-ipus auto "
                          "plans: strategy %s)\n",
                          r.min_ipus(), r.min_ipus_strategy());
  } else {
    absl::StrAppendFormat(&out,
                          "fewest IPUs: none fits (planned as shard --num-ipus "
                          "auto plans: strategy %s)\n",
                          r.min_ipus_strategy());
  }
  if (r.has_placement()) {
    const proto::FoundPlacement& f = r.placement();
    absl::StrAppend(
        &out, "placement in the model: __ipu_number on ", f.annotated_nodes(),
        " of ", Plural(r.num_nodes(), "node"), " (",
        Plural(f.num_ipus(), "IPU"), ", ",
        Plural(f.num_stages(), "pipeline stage"), "): ",
        f.error().empty()
            ? absl::StrCat(f.fits() ? "fits" : "does not fit", ", bottleneck ",
                           HumanSeconds(f.bottleneck_s()))
            : f.error(),
        "\n");
  }
  return out;
}

// The per-op-type table and the ops without a FLOPs rule.
std::string OpTypesText(const proto::InspectReport& r) {
  std::string out;
  absl::StrAppendFormat(&out, "%-40s %7s %16s %14s %12s\n", "op type", "count",
                        "compute", "MACs", "weights");
  for (const auto& t : r.op_types()) {
    absl::StrAppendFormat(&out, "%-40s %7d %16s %14.4g %12s%s\n", t.op_type(),
                          t.count(), HumanFlopsText(t.flops()), t.macs(),
                          HumanBytesText(t.weight_bytes()),
                          t.has_flops_rule() ? "" : "  (no FLOPs rule)");
  }
  if (r.ops_without_rule_size() > 0) {
    absl::StrAppend(&out,
                    "ops without a FLOPs rule (costed as output elements): ",
                    absl::StrJoin(r.ops_without_rule(), ", "), "\n");
  }
  return out;
}

// What the shapes leave open: unresolved input dims, nodes without static
// shapes, data-dependent dims set to a bound.
std::string ShapeGapsText(const proto::InspectReport& r) {
  std::string out;
  std::vector<std::string> dims;
  for (const auto& u : r.unresolved_dims()) {
    dims.push_back(absl::StrCat(
        u.input(), "[", u.dim(), "]",
        u.name().empty() ? "" : absl::StrCat(" '", u.name(), "'")));
  }
  absl::StrAppend(&out, "unresolved input dims: ",
                  dims.empty() ? "none" : absl::StrJoin(dims, ", "), "\n");
  absl::StrAppendFormat(
      &out, "nodes with unknown shapes: %d (Conv/MatMul/Gemm-class: %d)\n",
      r.nodes_with_unknown_shapes(), r.heavy_nodes_with_unknown_shapes());
  absl::StrAppendFormat(
      &out,
      "nodes without a static output shape: %d (Conv/MatMul/Gemm-class: "
      "%d%s)\n",
      r.nodes_without_static_shape(), r.heavy_nodes_without_static_shape_size(),
      r.heavy_nodes_without_static_shape_size() == 0
          ? ""
          : absl::StrCat(
                ": ",
                absl::StrJoin(r.heavy_nodes_without_static_shape(), ", ")));
  constexpr int kListed = 10;
  if (r.nodes_without_static_shape_names_size() > 0) {
    const auto& names = r.nodes_without_static_shape_names();
    const int shown = std::min(names.size(), kListed);
    absl::StrAppend(
        &out, "  ", absl::StrJoin(names.begin(), names.begin() + shown, ", "),
        names.size() > shown ? absl::StrCat(" and ", names.size() - shown,
                                            " more (--json lists all)")
                             : "",
        "\n");
  }
  absl::StrAppendFormat(&out, "data-dependent dims set to a bound: %d\n",
                        r.shape_assumptions_size());
  for (int i = 0; i < r.shape_assumptions_size() && i < kListed; ++i) {
    const proto::ShapeAssumption& a = r.shape_assumptions(i);
    absl::StrAppendFormat(&out, "  %s %s: %s dim %d = %d (%s)\n", a.op_type(),
                          a.node(), a.tensor(), a.dim(), a.value(), a.reason());
  }
  if (r.shape_assumptions_size() > kListed) {
    absl::StrAppendFormat(&out, "  ... and %d more (--json lists all)\n",
                          r.shape_assumptions_size() - kListed);
  }
  return out;
}

}  // namespace

std::string InspectText(const proto::InspectReport& r) {
  return absl::StrCat(SummaryText(r), OpTypesText(r), ShapeGapsText(r));
}

}  // namespace autoshard
