#include "sharder/plan_prepared.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "costmodel/calibration.h"
#include "costmodel/weight_location.h"
#include "pod/ipu_rows.h"
#include "pod/no_fit.h"
#include "pod/poprt_flags.h"
#include "sharder/assumptions.h"
#include "sharder/compile_judge.h"
#include "sharder/ipu_summaries.h"
#include "sharder/problem_file.h"
#include "sharder/stage_layout.h"
#include "solver/bound/certify.h"
#include "solver/strategies/constraints.h"
#include "solver/strategies/registry.h"
#include "solver/strategies/revisit.h"

namespace autoshard::internal {
namespace {

// Fills the tile-memory and performance figures of `plan` from `e`.
void SetFigures(const proto::DeviceProfile& device, const PlanEvaluation& e,
                double proportion, proto::Plan* pp) {
  pp->set_device(device.name());
  pp->set_tiles_per_ipu(device.tiles_per_ipu());
  pp->set_bytes_per_tile(device.bytes_per_tile());
  pp->set_available_memory_proportion(proportion);
  pp->set_fits(e.fits);
  pp->set_calibration(CalibrationLine(device));
  pp->set_within_model_uncertainty(false);
  for (int32_t d = 0; d < pp->ipus_size(); ++d) {
    *pp->mutable_ipus(d)->mutable_memory() =
        MemoryProto(e.memory[d], d, device);
    if (WithinMemoryBand(device, e.memory[d].max_tile_bytes))
      pp->set_within_model_uncertainty(true);
    pp->mutable_ipus(d)->set_stage_time_s(e.performance.stage_time_s[d]);
  }
  SetPerformanceProto(e.performance, pp->mutable_performance());
}

// The plan's conditions for CoverageNotes: each op class's share of the
// model's node times under `model`.
PlanConditions Conditions(const ShardingProblem& problem,
                          const DeviceModel& model, int64_t batch,
                          const std::string& precision, int num_ipus) {
  PlanConditions c;
  c.batch = batch;
  c.precision = precision;
  c.num_ipus = num_ipus;
  double total = 0;
  for (int32_t n = 0; n < problem.num_nodes(); ++n) {
    if (problem.is_constant[n]) continue;
    auto it = std::find_if(
        c.class_time_share.begin(), c.class_time_share.end(),
        [&](const auto& e) { return e.first == problem.op_class[n]; });
    if (it == c.class_time_share.end()) {
      c.class_time_share.emplace_back(problem.op_class[n], 0);
      it = c.class_time_share.end() - 1;
    }
    it->second += model.NodeTime(n);
    total += model.NodeTime(n);
  }
  for (auto& e : c.class_time_share)
    e.second = total > 0 ? e.second / total : 0;
  return c;
}

// The compiler's word wins over the tile-memory model's (search with
// --compile-cmd).
void ApplyCompilerVerdict(const StrategyResult& r, proto::Plan* plan) {
  if (!r.compiler_fits.has_value()) return;
  if (*r.compiler_fits && !plan->fits()) {
    plan->add_warnings(
        absl::StrCat("the tile-memory model disagrees with the compile "
                     "command, which accepted the split: ",
                     plan->out_of_memory()));
    plan->set_fits(true);
    plan->clear_out_of_memory();
    plan->clear_no_fit_reason();
    plan->clear_would_fit();
  }
  if (!*r.compiler_fits && plan->fits()) {
    plan->set_fits(false);
    plan->set_out_of_memory(
        r.compiler_message.empty()
            ? absl::StrCat(
                  "the compile command accepted no split; the closest used ",
                  r.summary.search().max_tile_bytes(),
                  " bytes on its fullest tile")
            : absl::StrCat("the compile command accepted no split: ",
                           r.compiler_message));
  }
}

}  // namespace

void Certify(const Prepared& p, const Options& options, Plan* plan) {
  if (options.bound_s <= 0) return;  // the cheap bound, set already
  const DeviceModel& model = p.analysis->device_model();
  proto::Performance* perf = plan->proto.mutable_performance();
  // The solvers' bounds hold over splits whose stage k runs on IPU k; auto
  // may return a plan whose last stage returns to IPU 0 (Note [Last stage on
  // IPU 0]) when a weight is read far apart or weights are variable, and
  // such a plan may beat them. Then only bounds that hold for every node ->
  // IPU map certify, whichever plan won.
  const bool revisit_possible =
      plan->proto.has_stages() ||
      (options.strategy == "auto" &&
       (options.weights == "variable" ||
        FarApartWeight(p.analysis->problem).has_value()));
  // auto chooses among monotone splits and splits whose last stage returns
  // to IPU 0: the smaller of the bounds on the two (Note [Revisit bound]).
  const std::vector<int32_t> of_stage = plan->placement.IpuOfStage();
  const bool revisits = plan->placement.RevisitsAnIpu();
  bool last_stage_on_ipu0 =
      revisits && !of_stage.empty() && of_stage.back() == 0 &&
      static_cast<int>(of_stage.size()) == plan->proto.num_ipus() + 1;
  for (size_t s = 0; last_stage_on_ipu0 && s + 1 < of_stage.size(); ++s)
    last_stage_on_ipu0 = of_stage[s] == static_cast<int32_t>(s);
  if (revisit_possible && options.strategy == "auto" &&
      (!revisits || last_stage_on_ipu0)) {
    SetCertificate(CertifyLastStageOnIpu0(
                       p.analysis->problem, model, plan->proto.num_ipus(),
                       revisits ? std::vector<int32_t>() : plan->placement.ipu,
                       perf->bottleneck_s(), plan->proto.fits(),
                       options.bound_s, perf->lower_bound_s()),
                   perf);
    return;
  }
  if (revisit_possible) {
    SetCertificate(
        CertifyAnyAssignment(p.analysis->problem, model, plan->proto.num_ipus(),
                             perf->lower_bound_s()),
        perf);
    return;
  }
  SetCertificate(
      CertifyBound(p.analysis->problem, model, plan->proto.num_ipus(),
                   plan->placement.ipu, perf->bottleneck_s(),
                   plan->proto.fits(), options.bound_s),
      perf);
}

PlanEvaluation EvaluateAssignment(const Prepared& p, const Options& options,
                                  const Assignment& a, double proportion) {
  return EvaluatePlacement(p.analysis->device_models().At(proportion), a,
                           p.analysis->batch);
}

Plan FinishPlan(const Prepared& p, const Options& options, const Assignment& a,
                const std::vector<ShardingPoint>& points, std::string strategy,
                const std::vector<std::string>& warnings,
                PlanEvaluation evaluation, double proportion,
                std::chrono::steady_clock::time_point start) {
  Plan plan;
  proto::Plan& pp = plan.proto;
  pp.set_strategy(std::move(strategy));
  pp.set_num_ipus(a.num_ipus());
  pp.set_batch_size(static_cast<int32_t>(p.analysis->batch));
  pp.set_precision(PrecisionName(options.precision));
  for (const ShardingPoint& pt : points) {
    auto* out = pp.add_sharding_points();
    out->set_node(p.analysis->problem.names[pt.node]);
    out->set_ipu(pt.ipu);
    out->set_pipeline_stage(pt.pipeline_stage);
  }
  for (auto& ipu : SummarizeIpus(p.analysis->problem, a))
    *pp.add_ipus() = std::move(ipu);
  for (auto& t : ListCutTensors(p.analysis->problem, p.analysis->dag, a))
    *pp.add_cut_tensors() = std::move(t);
  const int n = p.analysis->problem.num_nodes();
  for (int32_t node = 0; node < n; ++node) {
    auto* placement = pp.add_nodes();
    placement->set_node(p.analysis->problem.names[node]);
    placement->set_ipu(a.ipu[node]);
    placement->set_pipeline_stage(a.pipeline_stage[node]);
  }
  plan.node_names = p.analysis->problem.names;
  plan.placement = a;
  for (const auto& w : p.warnings) pp.add_warnings(w);
  for (const auto& w : warnings) pp.add_warnings(w);
  AddAssumptions(p, pp.mutable_assumptions());
  *pp.mutable_shapes() = MakeShapesVerdict(p);
  for (proto::PlannedInput& in :
       pod::PlannedInputs(p.analysis->model->graph(), p.analysis->tensors))
    *pp.add_planned_inputs() = std::move(in);
  pp.set_poprt_flags(
      pod::PopRtFlags({pp.planned_inputs().begin(), pp.planned_inputs().end()},
                      pp.precision(), proportion));
  proto::ModelSummary* s = pp.mutable_summary();
  s->set_num_nodes(n);
  s->set_total_flops(p.analysis->costs.total_flops);
  s->set_total_weight_bytes(p.analysis->costs.total_weight_bytes);
  s->set_nodes_named(p.naming.renamed_empty + p.naming.renamed_duplicate);
  for (const auto& op : p.analysis->costs.ops_without_rule)
    s->add_ops_without_rule(op);
  s->set_nodes_with_unknown_shapes(p.analysis->costs.nodes_with_unknown_shapes);
  if (static_cast<int>(evaluation.memory.size()) != a.num_ipus()) {
    evaluation = EvaluateAssignment(p, options, a, proportion);
  }
  const proto::DeviceProfile device =
      WithMemoryProportion(p.analysis->device, proportion);
  SetFigures(device, evaluation, proportion, &pp);
  // After the stage times are set.
  if (std::string idle = pod::IdleIpusWarning(pp); !idle.empty())
    pp.add_warnings(std::move(idle));
  const DeviceModel& judged = p.analysis->device_models().At(proportion);
  for (std::string& note : CoverageNotes(
           device, Conditions(p.analysis->problem, judged, p.analysis->batch,
                              pp.precision(), a.num_ipus())))
    pp.add_calibration_outside(std::move(note));
  if (a.RevisitsAnIpu()) {
    // Per stage (Note [A stage revisits an IPU]): the IPU's time less its
    // nodes' times.
    std::vector<double> compute_s(a.num_ipus(), 0);
    for (int32_t node = 0; node < n; ++node)
      compute_s[a.ipu[node]] += judged.NodeTime(node);
    for (int32_t d = 0; d < a.num_ipus(); ++d) {
      plan.copy_s.push_back(
          std::max(0.0, evaluation.performance.stage_time_s[d] - compute_s[d]));
    }
  } else {
    for (const proto::IpuCost& ipu : pp.ipus()) {
      plan.copy_s.push_back(
          judged.CopySeconds(static_cast<double>(ipu.cut_tensor_in_bytes())) +
          judged.CopySeconds(static_cast<double>(ipu.cut_tensor_out_bytes())));
    }
  }
  if (!evaluation.fits) {
    // The message names the fullest tile of all (the compiler names one).
    const DeviceModels& models = p.analysis->device_models();
    pp.set_out_of_memory(
        models.At(proportion)
            .OutOfMemoryMessage(evaluation.fullest_ipu,
                                evaluation.memory[evaluation.fullest_ipu]));
    const pod::NoFit why = pod::ExplainNoFit(
        models, proportion, ResidentWeightBytes(p.analysis->problem),
        p.analysis->batch, a.num_ipus(), a.ipu, evaluation.fullest_ipu);
    pp.set_no_fit_reason(why.reason);
    for (const std::string& w : why.would_fit) pp.add_would_fit(w);
  }
  s->set_planning_s(SecondsSince(start));
  return plan;
}

absl::StatusOr<Plan> PlanPrepared(const Prepared& p, const Options& options,
                                  const SearchOracle& oracle,
                                  std::chrono::steady_clock::time_point start) {
  const int k = options.num_ipus;
  const int n = p.analysis->problem.num_nodes();
  if (k > n) {
    return absl::InvalidArgumentError(
        absl::StrCat("--num-ipus ", k, " exceeds the model's ", n,
                     " nodes: every IPU needs at least one node"));
  }
  const Strategy* strategy = FindStrategy(options.strategy);
  if (strategy == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown strategy '", options.strategy, "'"));
  }
  RETURN_IF_ERROR(CheckConstraints(p.analysis->problem, k,
                                   &p.analysis->device_models().Get()));
  StrategyContext context;
  context.problem = &p.analysis->problem;
  context.device = p.analysis->device;
  context.device_models = &p.analysis->device_models();
  context.precision = options.precision;
  context.num_ipus = k;
  context.batch = p.analysis->batch;
  context.optimal_perf = options.optimal_perf;
  context.variable_weights = options.weights == "variable";
  context.max_candidates = options.max_candidates;
  context.max_search_s = options.max_search_s;
  context.start = start;
  context.progress = options.progress;
  // search judges its candidates with the compiler as it goes; the other
  // strategies plan without it, and it judges their splits afterwards.
  const bool search_judges = strategy->accepts_oracle();
  if (search_judges) context.oracle = oracle;
  ASSIGN_OR_RETURN(StrategyResult r, strategy->Run(context));
  // A split search repaired to keep the constraints has no verdict yet.
  if (oracle && (!search_judges || !r.compiler_fits.has_value())) {
    ASSIGN_OR_RETURN(r, CompileInOrder(context, std::move(r), oracle,
                                       std::string(strategy->name())));
  }
  // Note [Constraints in every strategy] (strategies/constraints.h).
  if (const std::string broken =
          BrokenConstraint(p.analysis->problem, r.assignment.ipu);
      !broken.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--strategy ", strategy->name(), " found no split onto ", k,
        " IPUs that keeps the constraints (its best: ", broken, ")",
        strategy->name() == "auto"
            ? "; every IPU needs a node and no edge may go to an earlier IPU"
            : "; --strategy auto runs the exact DP, which honours them"));
  }
  RETURN_IF_ERROR(ValidateAssignment(p.analysis->problem, r.assignment));
  RETURN_IF_ERROR(CheckVariableWeights(p, options, r.assignment));
  ASSIGN_OR_RETURN(std::vector<ShardingPoint> points,
                   MinimalShardingPoints(p.analysis->problem, r.assignment));
  Plan plan = FinishPlan(p, options, r.assignment, points,
                         std::string(strategy->name()), r.warnings,
                         r.evaluation, r.available_memory_proportion, start);
  plan.proto.MergeFrom(r.summary);
  SetStageLayout(p, options, r.assignment, r.evaluation, r.shared_weight,
                 r.other_evaluation, &plan.proto);
  ApplyCompilerVerdict(r, &plan.proto);
  Certify(p, options, &plan);
  if (options.keep_problem) {
    plan.problem = ToProblemProto(p.analysis->problem, p.analysis->device,
                                  options.precision, k, p.analysis->batch);
  }
  return plan;
}

}  // namespace autoshard::internal
