#include "solver/bound/certify.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "solver/bound/bound.h"
#include "solver/bound/heavy_bound.h"
#include "solver/bound/revisit_bound.h"

namespace autoshard {
namespace {

// Whether `bound_s` leaves the plan within kCertifiedEnoughPercent, where
// the search for a better bound stops (a bound of 0 never does: GapPercent
// is 0 against it).
bool CertifiedEnough(double plan_bottleneck_s, double bound_s) {
  return bound_s > 0 &&
         GapPercent(plan_bottleneck_s, bound_s) <= kCertifiedEnoughPercent;
}

}  // namespace

Certificate CertifyAnyAssignment(const ShardingProblem& problem,
                                 const DeviceModel& model, int num_ipus,
                                 double cheap_s) {
  const auto start = std::chrono::steady_clock::now();
  // Through host, HeavyNodeBound takes the single-set form (one cut per
  // node), which holds for every map; the link rate is the same.
  ShardingProblem any = problem;
  any.copies_through_host = true;
  const HeavyBoundResult heavy =
      HeavyNodeBound(any, model, num_ipus, cheap_s, HeavyBoundOptions());
  Certificate c;
  const bool heavier = heavy.node >= 0 && heavy.bound_s > cheap_s;
  c.bound_s = heavier ? heavy.bound_s : cheap_s;
  c.method = heavier ? "heavy node (it covers plans whose last stage returns "
                       "to IPU 0; the solvers' bounds do not)"
                     : "cheap (it covers plans whose last stage returns to "
                       "IPU 0; the solvers' bounds do not)";
  c.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return c;
}

Certificate CertifyBound(const ShardingProblem& problem,
                         const DeviceModel& model, int num_ipus,
                         const std::vector<int32_t>& plan_ipu,
                         double plan_bottleneck_s, bool plan_fits,
                         double max_seconds) {
  const BoundBudget budget{std::chrono::steady_clock::now(), max_seconds};
  Certificate c;
  c.bound_s = model.LowerBound(num_ipus);
  c.method = "cheap";
  auto finish = [&] {
    c.seconds = budget.Spent();
    return c;
  };
  if (max_seconds <= 0 || num_ipus < 2 || c.bound_s >= plan_bottleneck_s)
    return finish();
  BoundProblem asked{&problem,          &model,    num_ipus, &plan_ipu,
                     plan_bottleneck_s, plan_fits, c.bound_s};
  std::vector<std::string> notes;  // why each bound proved no more
  bool last_improved = false;
  for (const Bound* bound : CertifyBounds()) {
    asked.lower_s = c.bound_s;
    const BoundValue v = bound->Run(asked, budget);
    last_improved = v.bound_s > c.bound_s;
    if (last_improved) {
      c.bound_s = v.bound_s;
      c.method = v.method;
    }
    if (!v.note.empty()) notes.push_back(v.note);
    asked.at_most_k_relaxation_solved |= v.solved_at_most_k_relaxation;
    if (v.stop == BoundStop::kExact ||
        CertifiedEnough(plan_bottleneck_s, c.bound_s)) {
      return finish();
    }
  }
  // Why nothing better: for the report and the benchmark.
  if (!last_improved) {
    c.method = absl::StrCat(c.method, " (", absl::StrJoin(notes, "; "), ")");
  }
  return finish();
}

Certificate CertifyLastStageOnIpu0(
    const ShardingProblem& problem, const DeviceModel& model, int num_ipus,
    const std::vector<int32_t>& monotone_plan_ipu, double plan_bottleneck_s,
    bool plan_fits, double max_seconds, double cheap_s) {
  const auto start = std::chrono::steady_clock::now();
  auto spent = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  Certificate c = CertifyAnyAssignment(problem, model, num_ipus, cheap_s);
  if (max_seconds <= 0 || num_ipus < 2 ||
      CertifiedEnough(plan_bottleneck_s, c.bound_s)) {
    c.seconds = spent();
    return c;
  }
  const RevisitBoundResult revisit =
      RevisitBound(problem, model, num_ipus, plan_bottleneck_s);
  if (revisit.bound_s > c.bound_s) {
    const Certificate monotone = CertifyBound(
        problem, model, num_ipus, monotone_plan_ipu, plan_bottleneck_s,
        plan_fits, std::max(0.1, max_seconds - spent()));
    const double both = std::min(monotone.bound_s, revisit.bound_s);
    if (both > c.bound_s) {
      c.bound_s = both;
      c.method = absl::StrCat(
          monotone.bound_s <= revisit.bound_s ? "monotone splits: " : "",
          monotone.bound_s <= revisit.bound_s
              ? monotone.method
              : absl::StrCat("last stage on IPU 0: ", revisit.method,
                             ", head-to-tail reads dropped"),
          " (the smaller of the bounds on monotone splits and on plans whose "
          "last stage returns to IPU 0)");
    }
  }
  c.seconds = spent();
  return c;
}

double GapPercent(double bottleneck_s, double bound_s) {
  return bound_s > 0 ? std::max(0.0, (bottleneck_s / bound_s - 1) * 100) : 0;
}

void SetCertificate(const Certificate& certificate,
                    proto::Performance* performance) {
  const double bound =
      std::max(certificate.bound_s, performance->lower_bound_s());
  performance->set_certified_bound_s(bound);
  performance->set_certified_gap_percent(
      GapPercent(performance->bottleneck_s(), bound));
  performance->set_bound_method(certificate.method);
  performance->set_bound_seconds(certificate.seconds);
}

}  // namespace autoshard
