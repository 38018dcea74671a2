#include "sharder/bound/certify.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "sharder/bound/cut_bound.h"
#include "sharder/bound/filler_bound.h"
#include "sharder/bound/lp_bound.h"
#include "sharder/strategies/ideal_dp.h"

namespace autoshard {

Certificate CertifyBound(const ShardingProblem& problem,
                         const DeviceModel& model, int num_ipus,
                         const std::vector<int32_t>& plan_ipu,
                         double plan_bottleneck_s, bool plan_fits,
                         double max_seconds) {
  const auto start = std::chrono::steady_clock::now();
  Certificate c;
  c.bound_s = model.LowerBound(num_ipus);
  c.method = "cheap";
  auto finish = [&] {
    c.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    return c;
  };
  if (max_seconds <= 0 || num_ipus < 2 || c.bound_s >= plan_bottleneck_s)
    return finish();
  CutBoundOptions cut;
  const CutBoundResult cr =
      CutBound(problem, model, num_ipus, plan_bottleneck_s, cut);
  if (cr.improved) {
    c.bound_s = cr.bound_s;
    c.method = "min-cut";
  }
  if (GapPercent(plan_bottleneck_s, c.bound_s) <= kCertifiedEnoughPercent)
    return finish();
  IdealDpOptions ideal;
  ideal.max_ideals = 20000;  // no fit evaluations here: a larger lattice
  ideal.deadline =
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(max_seconds / 2));
  const IdealDpResult dp =
      IdealDpBound(problem, model, num_ipus, plan_bottleneck_s, ideal);
  if (dp.complete && dp.found) {
    if (dp.bottleneck_s > c.bound_s) {
      c.bound_s = dp.bottleneck_s;
      c.method = "ideal DP";
    }
    return finish();
  }
  if (!dp.ran) {  // too many ideals: the DP on fewer (Note [Filler bound])
    FillerBoundOptions filler;
    filler.deadline = ideal.deadline;
    const FillerBoundResult fr = FillerBound(
        problem, model, num_ipus, c.bound_s, plan_bottleneck_s, filler);
    if (fr.ran && fr.bound_s > c.bound_s) {
      c.bound_s = fr.bound_s;
      c.method = "ideal DP with fillers";
    }
    if (GapPercent(plan_bottleneck_s, c.bound_s) <= kCertifiedEnoughPercent)
      return finish();
  }
  const double spent =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  MipBoundOptions mip;
  mip.max_seconds = std::max(0.1, max_seconds - spent);
  mip.memory = plan_fits;
  mip.lower_s = c.bound_s;
  const MipBoundResult r = MipBound(problem, model, num_ipus, plan_ipu, mip);
  if (r.solved && r.bound_s > c.bound_s) {
    c.bound_s = r.bound_s;
    c.method = r.proven_optimal ? "CBC MIP, optimal" : "CBC MIP";
    if (r.stopped_by_clock) c.method += ", stopped by the clock";
  } else {
    // Why nothing better: for the report and the benchmark.
    c.method = absl::StrCat(
        c.method, " (ideal DP: ", dp.ideals, dp.ran ? "" : "+", " ideals",
        dp.ran && !dp.complete ? ", out of time" : "", "; CBC: ",
        r.solved
            ? absl::StrCat("no better in ", r.nodes, " nodes, ", r.columns,
                           " columns",
                           r.stopped_by_clock ? ", stopped by the clock" : "")
            : r.note,
        ")");
  }
  return finish();
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
