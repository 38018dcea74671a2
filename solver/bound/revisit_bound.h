// A lower bound on every plan whose last pipeline stage returns to IPU 0
// (Note [Last stage on IPU 0], solver/strategies/revisit.h), from the
// monotone bounds on a relaxed problem with one IPU more (issue 28).
//
// Note [Revisit bound]
// A plan P of that shape runs stages S_0..S_k (each node's stage at least
// its producers'), stage j on IPU j for j < k and S_k on IPU 0. Its
// IPU 0 takes t(S_0) + t(S_k) plus each of the two stages' copies in and
// out (Note [A stage revisits an IPU], costmodel/plan_evaluation.h); IPU j
// (0 < j < k) takes t(S_j) plus its stage's copies. Read the same stages as
// a monotone split Q onto k + 1 IPUs (stage j on IPU j): Q's copies equal
// P's but for tensors produced in S_0 and read in S_k, which P keeps on
// IPU 0 (not copied to S_k, nor passed through S_1..S_{k-1} for S_k).
// Let T >= P's bottleneck. A producer p in S_0 has its ancestors in S_0 and
// a reader r in S_k its descendants in S_k, both on IPU 0, so
//   A(p) + D(r) <= t(S_0) + t(S_k) <= T,
// A(p) (D(r)): a lower bound on the compute of p and its ancestors (r and
// its descendants); here the heaviest path into p (out of r), node times
// included. The relaxed problem R_T drops, from each tensor of a producer
// p, every reader r with A(p) + D(r) <= T: every (S_0, S_k) read among them.
// Dropping a reader only removes copies (never adds one), and only removes
// precedence (more monotone splits), so Q is a monotone split of R_T whose
// stage j costs at most P's stage j part: stage j < k and 0 < j the IPU's
// whole time, stages 0 and k each at most IPU 0's time. So
//   bottleneck(P) >= min(T, B(R_T, k + 1))
// for any bound B on every monotone split of R_T onto k + 1 IPUs: the
// min-cut bound (cut_bound.h) here. Sharper, with IPU 0's two stages summed:
// Note [Revisit cut bound] (cut_bound.h) and the heavy-node bound
// (heavy_bound.h) on R_T with k IPUs. With T the plan's bottleneck this
// bounds every such plan that could beat it. Memory is not counted.
// S_0 must hold a node: a placement whose stage 0 is empty runs one stage on
// IPU 0 and is costed as an IPU map that is not monotone (a tensor read on
// IPU 0 is copied there directly, not stage by stage, so Q's copies may
// exceed P's). auto never returns one: ValidateAssignment refuses a stage
// without a node (revisit_bound_test.cc).
#ifndef AUTOSHARD_SOLVER_BOUND_REVISIT_BOUND_H_
#define AUTOSHARD_SOLVER_BOUND_REVISIT_BOUND_H_

#include <cstdint>
#include <string>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"
#include "solver/bound/cut_bound.h"

namespace autoshard {

// R_T of Note [Revisit bound]: `problem` with the reads dropped and
// node_time_s set to `model`'s node times (so a DeviceModel of it over
// model.profile() has the same times and copy seconds). `dropped`: reads
// (tensor, reader) removed.
ShardingProblem DropHeadTailReads(const ShardingProblem& problem,
                                  const DeviceModel& model, double upper_s,
                                  int64_t* dropped);

struct RevisitBoundResult {
  // A valid lower bound (seconds) on the bottleneck of every plan with
  // num_ipus IPUs whose last stage returns to IPU 0, at most upper_s; 0 when
  // nothing was proven.
  double bound_s = 0;
  // Which held, on R_T: "min-cut on k + 1 stages", "min-cut, IPU 0's two
  // stages summed", "cheap (k IPUs)" or "heavy node".
  std::string method;
  int64_t dropped = 0;  // reads R_T dropped
  bool out_of_work = false;
};

// Note [Revisit bound] for `num_ipus` (>= 2) IPUs with T = `upper_s` (the
// plan's bottleneck). Deterministic (the bounds' work budgets, no clock).
// Never fails.
// `cut_options`: only its end_ideals is read (Note [Exact end windows], off by
// default), for the cut bounds it runs.
RevisitBoundResult RevisitBound(const ShardingProblem& problem,
                                const DeviceModel& model, int num_ipus,
                                double upper_s,
                                const CutBoundOptions& cut_options = {});

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_BOUND_REVISIT_BOUND_H_
