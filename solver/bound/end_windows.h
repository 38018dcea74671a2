// Exact smallest cuts near the graph's two ends, for the cut bound's buckets
// (Note [Cut bound], cut_bound.h).
//
// Note [Exact end windows]
// The plain cut of a bucket [lo, hi] is the smallest cut between the nodes
// every ideal of compute in it must hold and those none may hold; near the
// graph's start few nodes are forced in (W - P(desc v) < lo holds for none
// while the graph's other branches weigh more than lo), so the empty ideal
// is among the candidates and the cut is 0 bytes, and Note [Window cuts]'s
// Lagrangian cannot lift it (the empty ideal and the whole graph, both of
// cut 0, bracket every window). tv_raft_small: its first 85 us of compute
// (two encoders side by side, 5% of it) cost no copies in the DP, where a
// plan's first IPU sends 1.31 MB. But an ideal of compute at most H holds
// only nodes whose heaviest path in (their own time included) is at most
// H, and near the start those are few: their ideals of compute at most H
// are enumerated (a depth-first search in topological order, each node in
// or out, in only when its producers are and the compute stays at most H),
// the bytes over each ideal's boundary kept as nodes join (a tensor crosses
// from its producer's joining until its last reader joins, as ClosureCuts
// counts it: readers that are passive constants do not count), and each
// bucket within [0, H] gets the least cut of the ideals whose compute falls
// in it (an ideal within the tolerance of two buckets counts for both), no
// ideal at all meaning none. Symmetrically at the end: the complements of
// ideals (closed under readers) of compute at most H, from nodes whose
// heaviest path out is at most H, for the buckets within [W - H, W]. H
// starts at 4 W / k (a few stages' compute) and halves while an end has
// more than max_ideals such sets (then another try), down to one bucket.
// Every value is a least cut over every ideal of the bucket: the DP's
// buckets may take the larger of it and the plain cut.
// Off by default (CutBoundOptions::end_ideals = 0; RevisitBound takes it
// too), measured on the 242-row table (docs/bound_table.md, 5 Dec) with
// 20,000: 33 certified figures higher (tv_raft_small at 64 IPUs 46.52 ->
// 46.62 us, the revisit bound; its monotone bound stays 46.67 us), 11 lower
// (tv_fcos_resnet50_fpn at 8 IPUs 1,693.3 -> 1,676.3 us, gap 8.8% ->
// 9.9%; not traced: the chain-directed window cuts, on a budget, then
// refine other buckets, I take it), and the bound's seconds 86.6 -> 110.2.
// Valid with it on: the cut bound's tests against brute force run it, and the
// revisit bound's against the plans Note [Revisit bound] covers (stage 0
// holding a node; a placement whose stage 0 is empty may be below it).
#ifndef AUTOSHARD_SOLVER_BOUND_END_WINDOWS_H_
#define AUTOSHARD_SOLVER_BOUND_END_WINDOWS_H_

#include <cstdint>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

// What Note [Exact end windows] found.
struct EndWindows {
  // Per bucket: the least bytes over a boundary of an ideal whose compute
  // lies in it; -1 where not known (outside both enumerated ends),
  // kNoIdeal where no ideal's compute lies in it.
  std::vector<int64_t> least_bytes;
  double front_s = 0, back_s = 0;  // H at each end (0: not enumerated)
  int64_t ideals = 0;              // sets enumerated, the failed tries too
  static constexpr int64_t kNoIdeal = INT64_MAX;
};

// Note [Exact end windows] for buckets [lo[b], hi[b]] (seconds of compute,
// ascending, covering [0, total_s]) of `problem`'s ideals (passive
// constants, PassiveConstants(problem), left out), node times model.NodeTime;
// k >= 1 IPUs sets the first H. O(tries x max_ideals x nodes enumerated).
EndWindows ExactEndWindows(const ShardingProblem& problem,
                           const DeviceModel& model, int k,
                           const std::vector<double>& lo,
                           const std::vector<double>& hi, double tolerance_s,
                           int64_t max_ideals);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_BOUND_END_WINDOWS_H_
