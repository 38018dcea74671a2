// The cut bound: a lower bound on the bottleneck that counts the copies
// every stage boundary must carry, from minimum cuts (max-flows) — cheap
// where the MIP of Note [MIP bound] proves nothing (its LP relaxation spreads
// every node over all IPUs and copies nothing).
//
// Note [Cut bound]
// Let W be Σ node times (folded constants left out, see Note [Ideals]) and
// I_j the ideal on IPUs 0..j of a monotone split onto k IPUs. An ideal I
// whose compute P(I) lies in [lo, hi] holds every node v with
// W - P(desc v) < lo (else the nodes outside I, v's descendants among them,
// weigh too much) and no node v with P(anc v) > hi. So its cut bytes C(I)
// are at least the smallest cut of an ideal between those two sets: a
// closure problem solved with a max-flow (a vertex per tensor: producer ->
// tensor of its bytes, tensor -> reader of infinity; reader -> producer of
// infinity keeps the source side an ideal).
// With PopART's adjacent-stage copies IPU d's stage time is
//   P(I_d) - P(I_{d-1}) + CopySeconds(C(I_{d-1})) + CopySeconds(C(I_d))
// (I_{-1} empty, I_{k-1} everything; both sides pay a boundary's copy). W is
// cut into `buckets` of equal compute, each with its smallest cut m_b; with
// P(I_j) in bucket b_j (b_0 <= b_1 <= ...) stage d takes at least
//   max(0, lo_{b_d} - hi_{b_{d-1}}) + CopySeconds(m_{b_{d-1}}) +
//   CopySeconds(m_{b_d}),
// and a DP over the buckets (O(k x buckets^2)) finds the chain of buckets
// with the least largest such time: a lower bound on every split's
// bottleneck (the split's own chain is one of those it compares).
// Through host memory (copies_through_host) a cut tensor is sent once and
// received at least once, so only Σ stage times >= W + 2 CopySeconds(C(I_j))
// is used, with P(I_j) in the window [W - (k-1-j) T, (j+1) T] of a
// bottleneck <= T; a bisection over T finds the largest T this rules out.
// Ancestor and descendant times are exact for up to kCutBoundExactNodes
// nodes (bit sets), else longest paths (smaller, so still valid).
//
// Note [Window cuts]
// The forced sets know little of a wide graph (detection heads: each
// class's branch has small ancestors and descendants), so the smallest cut
// of a window's closure problem may belong to an ideal whose compute is far
// outside the window (tv_ssdlite320 on 16 IPUs: 667 KB at 1,876 us for the
// window [654, 657] us). When the plain DP leaves the plan more than 1%
// above it, the windows of `window_groups` groups of buckets get a
// Lagrangian bound: for nu >= 0, min over closures I of
//   C(I) + nu (P(I) - hi)   (<= C(I) for every I with P(I) <= hi),
// and for nu < 0 of C(I) + |nu| (lo - P(I)) (<= C(I) when P(I) >= lo), each
// a max-flow with node weights nu x time (rounded down: smaller, still
// valid) on the sink or source side. nu's sign is the side the plain cut's
// ideal misses; it is widened from the forced set's bytes / the miss, then
// bisected on which side the minimising ideal falls (the subgradient), and
// the largest value is kept: at least the plain cut, and a lower bound on
// the bytes of every ideal in the window. The DP then runs once more.
//
// Note [Revisit cut bound]
// A plan whose last stage S_k returns to IPU 0 (Note [Revisit bound],
// solver/bound/revisit_bound.h) on a problem R where its stages cost what
// Note [Cut bound]'s monotone stages cost (R_T there): boundaries I_0 ..
// I_{k-1}, IPUs 1..k-1 as above, and IPU 0 running stage 0 (P(I_0) +
// CopySeconds(C(I_0))) and stage k (W - P(I_{k-1}) + CopySeconds(C(I_{k-1})))
// in turn, their sum. A threshold t is ruled out when no chain of buckets
// b_0 <= ... <= b_{k-1} has every middle stage's least time <= t and
// lo_{b_0} + m_{b_0} + (W - hi_{b_{k-1}}) + m_{b_{k-1}} <= t (a DP keeping,
// per bucket, the least stage-0 time of the chains that reach it); the
// largest ruled out is found by bisection from the cheap bound for k IPUs
// (which holds for every node -> IPU map). With Note [Reach DP] the DP also
// keeps per bucket the largest position the chains reaching it reach, and
// the tail is W - that position: the least stage-0 time and the largest
// position may come from two chains (a relaxation: still valid). Only
// buckets less than t apart are paired: O(k x buckets x t / width) per t,
// so it runs at every k (it stopped at 32 IPUs when it paired all,
// O(k x buckets^2)). Note [Late branches] applies as to the monotone bound:
// a plan restricted to the kept nodes is one of the reduced problem.
//
// Note [Reach DP]
// The chain DP above loses up to a bucket's compute at each end of a stage:
// it knows only P(I_{d-1}) <= hi and P(I_d) >= lo. For a threshold t the
// boundaries' positions x_d = P(I_d) can be followed instead: a split whose
// every stage time is at most t has, with x_d in bucket b_d and c(b) the
// bucket's least copy seconds,
//   x_0 + c(b_0) <= t,  x_d - x_{d-1} + c(b_{d-1}) + c(b_d) <= t,
//   W - x_{k-2} + c(b_{k-2}) <= t.
// Per stage and bucket the DP keeps the largest x_d such a chain of
// positions reaches (a larger x_d only loosens the next stage's constraint;
// x_d = min(hi_{b_d}, x_{d-1} + t - c - c), kept when >= lo_{b_d}); when none
// passes the last stage, no split has a bottleneck <= t. A chain this DP
// accepts is one the chain DP accepts, so bisection runs from the chain
// bound up to the plan. A stage spans at most t of compute, so a bucket is
// paired only with buckets less than t before it: O(k x buckets x t / width)
// per step. tv_raft_small at 64 IPUs: 43.5 -> 44.5 us.
//
// Note [Late branches]
// Nodes whose heaviest path out is short (an output's own branch, as RAFT's
// upsampling of each iteration's flow, and the graph's last nodes) let an
// ideal leave them out for the bytes of their small inputs: the least cut of
// a window in the middle of an iteration is then that of an iteration's end
// with a few such branches left out (tv_raft_small: 12 branches of about
// 5 us). L = {v : heaviest path out of v, its own time included, <=
// late_share x T} is closed under readers (the path only shortens along an
// edge). Drop L's nodes, their compute and their reads: a monotone split of
// the graph, restricted to the rest, is a monotone split of the reduced
// problem (empty IPUs allowed) whose every stage is no slower (less
// compute; a tensor crosses a boundary only when a kept node reads it
// beyond, so no more bytes, and a fixed copy cost only where the split paid
// one). So a bound on the reduced problem bounds the graph; it gives up at
// most L's compute. It runs when the bound on the whole graph leaves the
// plan more than 1% above it, the larger kept: first with the window groups
// above, then, only when that proved more than every bound before it (in
// the cascade it runs after the heavy-node bound), with late_window_groups
// (late_max_work, a work budget of both passes' own). tv_raft_small at 64
// IPUs: 44.5 -> 46.7 us with a window per bucket, at 2-3 times the seconds of
// late_window_groups' value.
//
// Note [Chain-directed window cuts]
// After Note [Window cuts], when the DP still leaves the plan more than 1%
// above it, the groups of buckets the DP's best chain puts its boundaries
// in, at the boundaries of its critical stages (those within 0.1% of its
// value), get Note [Branched window cuts] (solver/bound/window_cut.h): a
// lower bound on every ideal of the group's window, which raises the copy
// seconds of each bucket in it; the DP runs again and the windows of its
// new chain are refined (Note [Narrowing window cuts]), until its critical
// boundaries lie in single refined buckets only, two rounds in a row raise
// the DP by less than 0.1% (the cheap early exit), the DP reaches 99% of
// the plan, or the clock (branched_deadline) or its own work
// (branched_work) runs out; a round cut short still counts what it proved.
// Every bucket's copy seconds stay a lower bound on each ideal in it, so
// each DP's value is a bound; the last (the largest) is kept. The groups
// tried are only those some best chain passes through: the bound's cost
// follows where the DP is short, not the graph's size. It runs on the whole
// graph only, not on Note [Late branches]' reduced problem.
//
// Note [Narrowing window cuts]
// A group's window is wide (1/64 of W: 164 us on tv_fcos_resnet50_fpn on 8
// IPUs) and its least ideal may lie far from the bucket the chain uses
// (branching proves no ideal at all in 3,482-3,492 us there, yet the group
// around it holds cheap ones). So a chain boundary in a bucket whose
// narrowest refined window is w buckets wide gets the window of w / 4
// buckets around it (aligned to multiples of w / 4), down to the bucket
// itself: a narrower window has fewer ideals, so its branched bound is at
// least as large, and it is a lower bound on every ideal of each bucket in
// it (the bucket's ideals are among the window's). Each bucket keeps the
// largest of its bounds. (fcos 8 IPUs: 1,662.5 -> 1,693 us.)
//
// Note [Split buckets]
// The DP's stage bound max(0, lo_b - hi_a) leaves out up to two bucket
// widths of compute; halving the buckets halves that. The smallest cuts are
// still found once per `buckets` (the max-flows cost the same): each of
// the dp_split DP buckets a cut bucket splits into keeps its cut, a lower
// bound on its ideals as they are among the cut bucket's (infinity stays
// infinity: no ideal there, none in a part). The DP costs dp_split^2 times
// as much (O(k x (dp_split x buckets)^2), less with its pruning).
#ifndef AUTOSHARD_SOLVER_BOUND_CUT_BOUND_H_
#define AUTOSHARD_SOLVER_BOUND_CUT_BOUND_H_

#include <chrono>
#include <cstdint>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"
#include "solver/strategies/closure_cuts.h"

namespace autoshard {

struct CutBoundOptions {
  // Arc scans of the max-flows at most (a deterministic budget); when spent,
  // the bound found so far is returned.
  int64_t max_work = 400000000;
  // PopART's copies: buckets of equal compute the DP places boundaries in.
  int buckets = 1024;
  // Note [Split buckets] (adjacent copies): DP buckets per bucket's cut.
  int dp_split = 2;
  // Note [Window cuts]: groups of buckets whose window cut is found (0:
  // none), when the plain bound leaves the plan more than 1% above it.
  int window_groups = 64;
  // Note [Chain-directed window cuts] (adjacent copies, after the window
  // cuts): sides of each group's branching at most (0: not run), and the
  // time by which it stops (the DP's value then is the bound).
  int branched_sides = 0;
  // Arc scans the chain-directed window cuts may spend beyond those spent
  // before them (their own budget; max_work bounds the earlier cuts).
  int64_t branched_work = 400000000;
  std::chrono::steady_clock::time_point branched_deadline =
      std::chrono::steady_clock::time_point::max();
  // Halvings of the bisections (through host; Note [Reach DP]; Note
  // [Revisit cut bound]) between their start and upper_s.
  int bisection_steps = 14;
  // Problems with more lattice nodes are not tried (the result says so).
  int32_t max_nodes = 20000;
  // Note [Late branches]: nodes whose heaviest path out (their own time
  // included) is at most this share of upper_s are dropped, when the bounds
  // above leave the plan more than 1% above; 0: never. Arc scans of that
  // second bound at most, and the window groups of its second pass.
  double late_share = 0.1;
  int64_t late_max_work = 200000000;
  int late_window_groups = 256;
  // Note [Exact end windows] (end_windows.h): sets enumerated at most at
  // each end per try; 0 (the default): off (see the Note for why).
  int64_t end_ideals = 0;
  // Note [Reach DP] after the chain DP (tests turn it off to compare).
  bool reach_dp = true;
  // A bound already proven (seconds; the cascade's, or the heavy-node
  // bound's): Note [Late branches]'s window cut per bucket runs only when
  // the late branches' first pass proves more than it, and not at all when
  // it leaves the plan within 1%.
  double known_s = 0;
  // Only Note [Late branches]'s bound (the cascade ran the whole graph's
  // before): the result is at least the cheap bound.
  bool late_only = false;
  // Note [Pooled late branches]: compute seconds outside the problem that
  // some IPU of every plan still runs (>= 0; LateBound sets it to the
  // dropped late branches' compute). Only Note [Reach DP] and Note [Revisit
  // cut bound]'s reach pass use it.
  double pooled_s = 0;
  // Whether LateBound sets pooled_s (tests turn it off to compare).
  bool pool_late = true;
};

struct CutBoundResult {
  double bound_s = 0;     // valid lower bound on every monotone split's
                          // bottleneck; >= model.LowerBound(k)
  bool improved = false;  // above the cheap bound
  int64_t work = 0;       // arc scans spent
  bool out_of_work = false;
  // Note [Chain-directed window cuts]: groups refined, and whether that
  // raised the bound.
  int branched_groups = 0;
  bool branched = false;
};

// Note [Capped chain DP]
// The chain DP's step is f'(b) = min over a <= b of max(f(a), stage(a, b))
// with stage(a, b) >= lo_b - hi_a, which only grows as a falls. Scanning a
// from b down, once lo_b - hi_a exceeds the best value found for b no
// smaller a can beat it, and once it exceeds the cap (the plan's
// bottleneck: a bound at or above it proves the plan) none can give a value
// below the cap. A pruned candidate's value exceeds the cap, so every entry
// whose true value is at most the cap is computed exactly (and the others
// are only larger, still above it): min(result, cap), which it returns, is
// min(true, cap), and a result below the cap comes with the same chain (ties to
// the smallest a, as the ascending scan's first minimum). A stage spans at most
// the cap, so a step pairs each bucket with the cap / width buckets before
// it: O(k x buckets x cap / width) instead of O(k x buckets^2) (Swin-T at
// 256 IPUs: 2,048 buckets, the cap about 3% of W).

namespace internal {

// The DP of Note [Cut bound] over buckets [lo[b], hi[b]] (seconds of
// compute, ascending, all of size nb) whose boundaries copy at least
// copy_s[b] seconds (infinity: no ideal there), W = total_s, onto k >= 2
// IPUs: the least over chains b_0 <= ... <= b_{k-2} of the largest stage
// time. Exact when at most cap_s (Note [Capped chain DP]), else cap_s. `chain`
// (optional): the buckets of a best chain's boundaries I_0..I_{k-2} (meaningful
// only when the result is at most cap_s). O(k x nb x window), window the
// buckets within cap_s of compute.
double ChainBound(const std::vector<double>& lo, const std::vector<double>& hi,
                  const std::vector<double>& copy_s, double total_s, int k,
                  double cap_s, std::vector<int>* chain = nullptr);

}  // namespace internal

// The bound of Note [Cut bound] for `num_ipus` IPUs; `upper_s`: the
// bottleneck of some monotone split (the plan's), where the search stops.
// Never fails.
CutBoundResult CutBound(const ShardingProblem& problem,
                        const DeviceModel& model, int num_ipus, double upper_s,
                        const CutBoundOptions& options);

// Per node, the heaviest path out of it (seconds of `model`'s node times, its
// own included): at most the compute of it and its descendants. Never rises
// along an edge. O(nodes + edges).
std::vector<double> HeaviestPathsOutS(const ShardingProblem& problem,
                                      const DeviceModel& model);

// Note [Late branches]: `problem` without the nodes whose heaviest path out
// (their own time included, seconds) is at most `max_s`: they become folded
// constants of no time that read nothing (their reads dropped), and
// node_time_s is set to `model`'s node times (so a DeviceModel of it over
// model.profile() has the same times). `dropped_s`: their Σ time. O(nodes +
// edges).
ShardingProblem DropLateBranches(const ShardingProblem& problem,
                                 const DeviceModel& model, double max_s,
                                 double* dropped_s);

// Note [Revisit cut bound] on `problem` (R_T) for plans onto `num_ipus`
// IPUs whose last stage returns to IPU 0, with `upper_s` >= T (the search's
// top); adjacent copies only (through host: the cheap bound). bound_s is a
// lower bound on every such plan's bottleneck when their stages cost on R
// at most what they cost on the model's problem. Never fails.
CutBoundResult RevisitCutBound(const ShardingProblem& problem,
                               const DeviceModel& model, int num_ipus,
                               double upper_s, const CutBoundOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_BOUND_CUT_BOUND_H_
