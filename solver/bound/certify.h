// The certified bound a plan reports (issue 19; DESIGN.md §3.4): the best
// valid lower bound on the bottleneck found within a time limit, from the
// cheapest method that applies, stopping once the plan is within
// kCertifiedEnoughPercent of it:
// - the heavy-node bound (solver/bound/heavy_bound.h): what the IPU of a
//   costly node pays, its compute and the copies in and out of it unless
//   neighbours join it; deterministic (a work budget, no clock);
// - the min-cut bound (solver/bound/cut_bound.h): copies counted, memory
//   not; deterministic (a work budget, no clock);
// - the ideal DP's relaxation (solver/strategies/ideal_dp.h), exact when
//   the graph has few ideals: copies counted, memory not;
// - when it has too many, the same DP on a problem with fewer ideals whose
//   optimum is still a bound (solver/bound/filler_bound.h: sources merged
//   into their reader or pooled as free compute);
// - else COIN-OR CBC on the program of Note [MIP bound]
//   (solver/bound/lp_bound.h): copies and, for a plan that fits, the
//   weights and code each IPU must hold;
// - else, or when neither proves more, the cheap bound
//   (DeviceModel::LowerBound: Σ time / k, the costliest node, pigeonhole).
// A plan auto may return with its last stage back on IPU 0 gets the smaller
// of that cascade's bound and the revisit bound (CertifyLastStageOnIpu0,
// solver/bound/revisit_bound.h), at least the bound over every map.
#ifndef AUTOSHARD_SOLVER_BOUND_CERTIFY_H_
#define AUTOSHARD_SOLVER_BOUND_CERTIFY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"
#include "proto/plan.pb.h"

namespace autoshard {

// A gap this small ends the search for a better bound (the solvers' time is
// spent only where a plan may be more than this far from the optimum).
inline constexpr double kCertifiedEnoughPercent = 1.0;

struct Certificate {
  double bound_s = 0;  // valid lower bound on every monotone split's bottleneck
  // proto::Performance::bound_method; "cheap" says in parentheses why the
  // solver did not do better (when it ran).
  std::string method;
  double seconds = 0;
};

// The certified bound for `num_ipus` IPUs, given a monotone split
// `plan_ipu` (per node) with bottleneck `plan_bottleneck_s`; `plan_fits`:
// it fits, so the bound may count memory (it then bounds the fitting
// splits). `max_seconds` <= 0: the cheap bound only (the solver is off).
Certificate CertifyBound(const ShardingProblem& problem,
                         const DeviceModel& model, int num_ipus,
                         const std::vector<int32_t>& plan_ipu,
                         double plan_bottleneck_s, bool plan_fits,
                         double max_seconds);

// The certified bound over every node -> IPU map, monotone or not (a plan
// whose last stage returns to IPU 0 included, Note [Last stage on IPU 0]):
// the larger of `cheap_s` (DeviceModel::LowerBound, which holds for every
// map) and the heavy-node bound's single-set form (Note [Heavy-node bound]:
// an IPU's time is at least its nodes' times plus the bytes crossing its
// boundary over the link rate, whatever the map). The solvers' bounds
// (min-cut, nested ideals, ideal DP, CBC) hold over monotone splits only.
Certificate CertifyAnyAssignment(const ShardingProblem& problem,
                                 const DeviceModel& model, int num_ipus,
                                 double cheap_s);

// The certified bound of a plan auto chose among monotone splits and plans
// whose last stage returns to IPU 0 (Note [Last stage on IPU 0]): the
// larger of CertifyAnyAssignment's and the smaller of CertifyBound's (every
// monotone split) and RevisitBound's (every plan of the other shape, Note
// [Revisit bound], solver/bound/revisit_bound.h), the two families auto
// chooses from. `monotone_plan_ipu`: the plan when it is monotone, else
// empty (CBC then starts without it). Nothing more runs when the
// any-assignment bound leaves the plan within kCertifiedEnoughPercent (as
// the cascade stops there: Swin-T at 256 IPUs, whose plan is its heavy
// node's, 1.9 s -> 0); the monotone cascade runs only when the revisit
// bound exceeds the any-assignment one, with what is left of `max_seconds`;
// <= 0: CertifyAnyAssignment alone.
Certificate CertifyLastStageOnIpu0(
    const ShardingProblem& problem, const DeviceModel& model, int num_ipus,
    const std::vector<int32_t>& monotone_plan_ipu, double plan_bottleneck_s,
    bool plan_fits, double max_seconds, double cheap_s);

// (bottleneck / bound - 1) x 100, and 0 when the bound is 0 or the
// bottleneck is below it (a rounding error is no gap).
double GapPercent(double bottleneck_s, double bound_s);

// Sets performance's certified_bound_s, certified_gap_percent,
// bound_method and bound_seconds from `certificate`.
void SetCertificate(const Certificate& certificate,
                    proto::Performance* performance);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_BOUND_CERTIFY_H_
