// Where each main-graph node runs: the one placement type (issue 26 point
// 2), from the strategy that finds it (sharder/strategies/sharding_points.h
// calls it Assignment) through the plan (Plan::placement) to every writer
// (the annotations, graph/annotations.h; the per-stage models,
// sharder/split/split.h), never through node attributes. Dense: indexed by
// node id, in the main graph's file order, as onnxruntime's IndexedSubGraph
// refers to nodes by index.
//
// Note [A placement is per node]
// A placement keeps both numbers per node, not node -> stage and stage ->
// IPU: what `apply` and --keep-placement evaluate is a sharding config or
// a model's annotations as written, and those may put one pipeline stage on
// several IPUs (PopART refuses such a plan when it compiles; autoshard
// evaluates it with a warning, and `split` refuses it). Every plan a
// strategy makes has ipu == pipeline_stage on every node.
#ifndef AUTOSHARD_GRAPH_PLACEMENT_H_
#define AUTOSHARD_GRAPH_PLACEMENT_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace autoshard {

// Both indexed by node; values >= 0.
struct Placement {
  std::vector<int32_t> ipu;             // written as __ipu_number
  std::vector<int32_t> pipeline_stage;  // written as __pipeline_stage
  // The IPUs used: max IPU + 1 (0 when empty).
  int num_ipus() const {
    int32_t max_ipu = -1;
    for (int32_t i : ipu) max_ipu = std::max(max_ipu, i);
    return max_ipu + 1;
  }
};

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_PLACEMENT_H_
