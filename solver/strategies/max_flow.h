// A maximum flow (Dinic's algorithm; Dinic 1970, as in Cormen et al.,
// "Introduction to Algorithms", 3rd ed., problem 26-5 and §26.4), with
// integer capacities: what the closure cuts (solver/strategies/
// closure_cuts.h) use to find the fewest bytes a stage boundary must carry,
// for the cut bound (solver/bound/cut_bound.h) and auto's min-cut order.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_MAX_FLOW_H_
#define AUTOSHARD_SOLVER_STRATEGIES_MAX_FLOW_H_

#include <cstdint>
#include <vector>

namespace autoshard {

class MaxFlow {
 public:
  explicit MaxFlow(int32_t num_vertices) : head_(num_vertices, -1) {}

  // An arc u -> v of `capacity` (>= 0) and its residual v -> u of 0.
  void AddArc(int32_t u, int32_t v, int64_t capacity);

  // The largest flow from `source` to `sink`, stopped once it reaches
  // `limit` (then the result is >= limit). Each arc scan counts 1 towards
  // *work (deterministic, unlike a clock). O(V^2 E) at worst; no recursion
  // (a path of any length needs O(1) stack).
  int64_t Solve(int32_t source, int32_t sink, int64_t limit, int64_t* work);

  // After a Solve that returned less than its limit: whether `v` is on the
  // source side of a minimum cut (reached from the source over arcs with
  // residual capacity: the smallest such side).
  bool SourceSide(int32_t v) const { return level_[v] >= 0; }

 private:
  struct Arc {
    int32_t to, next;
    int64_t residual;
  };
  bool Levels(int32_t source, int32_t sink, int64_t* work);
  int64_t Push(int32_t source, int32_t sink, int64_t amount, int64_t* work);

  std::vector<Arc> arcs_;
  std::vector<int32_t> head_, level_, next_arc_, queue_;
  std::vector<int32_t> path_;  // Push's arcs from the source
};

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_MAX_FLOW_H_
