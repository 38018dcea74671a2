// SolveProblem (sharder/problem_file.h): the partitioner on a problem file.
#include <chrono>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "costmodel/device_model.h"
#include "graph/status_macros.h"
#include "sharder/bound/certify.h"
#include "sharder/plan.h"
#include "sharder/prepare.h"
#include "sharder/problem_file.h"
#include "sharder/strategies/ideal_dp.h"
#include "sharder/strategies/optimal_strategy.h"

namespace autoshard {
namespace {

struct Judged {
  std::string strategy;
  std::vector<int32_t> ipu;
  bool fits = true;
  double bottleneck_s = 0;
  double seconds = 0;
};

Judged JudgeSplit(const DeviceModel& model, std::string strategy,
                  std::vector<int32_t> ipu, int k, double seconds) {
  Judged j{std::move(strategy), std::move(ipu), true, 0, seconds};
  for (int d = 0; d < k; ++d) j.fits &= model.EvaluateMemory(j.ipu, d).fits;
  j.bottleneck_s = model.EvaluatePerformance(j.ipu, k, 1).bottleneck_s;
  return j;
}

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
      .count();
}

// The plan file's content for split `j` of `loaded`.
proto::Plan PlanOf(const LoadedProblem& loaded, const DeviceModel& model,
                   const Judged& j) {
  const ShardingProblem& p = loaded.problem;
  const int k = loaded.num_ipus;
  proto::Plan plan;
  plan.set_strategy(absl::StrCat("solve: ", j.strategy));
  plan.set_num_ipus(k);
  plan.set_batch_size(static_cast<int32_t>(loaded.batch));
  plan.set_precision(internal::PrecisionName(loaded.precision));
  plan.set_device(loaded.device.name());
  plan.set_available_memory_proportion(
      loaded.device.available_memory_proportion());
  const Assignment a{j.ipu, j.ipu};
  for (auto& ipu : SummarizeIpus(p, a)) *plan.add_ipus() = std::move(ipu);
  const Performance perf = model.EvaluatePerformance(j.ipu, k, loaded.batch);
  plan.set_fits(true);
  for (int32_t d = 0; d < k; ++d) {
    const IpuMemory m = model.EvaluateMemory(j.ipu, d);
    *plan.mutable_ipus(d)->mutable_memory() = MemoryProto(m, d, loaded.device);
    plan.mutable_ipus(d)->set_stage_time_s(perf.stage_time_s[d]);
    if (!m.fits && plan.fits()) {
      plan.set_fits(false);
      plan.set_out_of_memory(model.OutOfMemoryMessage(d, m));
    }
  }
  for (int32_t n = 0; n < p.num_nodes(); ++n) {
    proto::NodePlacement* placement = plan.add_nodes();
    placement->set_node(p.names[n]);
    placement->set_ipu(j.ipu[n]);
    placement->set_pipeline_stage(j.ipu[n]);
  }
  SetPerformanceProto(perf, plan.mutable_performance());
  return plan;
}

}  // namespace

absl::StatusOr<proto::Plan> SolveProblem(const LoadedProblem& loaded,
                                         const SolveOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const ShardingProblem& p = loaded.problem;
  const int k = loaded.num_ipus;
  DeviceModel model(p, loaded.device, loaded.precision);
  std::vector<Judged> tried;
  OptimalOptions optimal_options;
  optimal_options.max_seconds = options.max_search_s;
  ASSIGN_OR_RETURN(OptimalResult optimal,
                   OptimalStrategy(p, model, k, optimal_options));
  tried.push_back(
      JudgeSplit(model, "optimal", optimal.assignment.ipu, k, Since(start)));
  const auto ideal_start = std::chrono::steady_clock::now();
  IdealDpOptions ideal;
  ideal.deadline =
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(options.max_search_s));
  const double cap = tried[0].fits ? tried[0].bottleneck_s
                                   : std::numeric_limits<double>::infinity();
  IdealDpResult r = IdealDpSplit(p, model, k, cap, false, ideal);
  if (r.found) {
    tried.push_back(
        JudgeSplit(model, "ideal", std::move(r.ipu), k, Since(ideal_start)));
  }
  size_t best = 0;
  for (size_t i = 1; i < tried.size(); ++i) {
    const Judged &a = tried[i], &b = tried[best];
    if (a.fits != b.fits ? a.fits : a.bottleneck_s < b.bottleneck_s) best = i;
  }
  proto::Plan plan = PlanOf(loaded, model, tried[best]);
  for (size_t i = 0; i < tried.size(); ++i) {
    proto::StrategyResult* c = plan.add_candidates();
    c->set_strategy(tried[i].strategy);
    c->set_fits(tried[i].fits);
    c->set_bottleneck_s(tried[i].bottleneck_s);
    c->set_available_memory_proportion(
        loaded.device.available_memory_proportion());
    c->set_seconds(tried[i].seconds);
    c->set_chosen(i == best);
  }
  plan.mutable_summary()->set_num_nodes(p.num_nodes());
  plan.mutable_summary()->set_planning_s(Since(start));
  SetCertificate(
      CertifyBound(p, model, k, tried[best].ipu, tried[best].bottleneck_s,
                   tried[best].fits, options.bound_s),
      plan.mutable_performance());
  return plan;
}

}  // namespace autoshard
