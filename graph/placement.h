// Where each main-graph node runs: the one placement type (issue 26 point
// 2), from the strategy that finds it (solver/strategies/sharding_points.h
// calls it Assignment) through the plan (Plan::placement) to every writer
// (the annotations, graph/annotations.h; the per-stage models,
// writers/split/split.h), never through node attributes. Dense: indexed by
// node id, in the main graph's file order, as onnxruntime's IndexedSubGraph
// refers to nodes by index.
//
// Note [A placement is per node]
// A placement keeps both numbers per node, not node -> stage and stage ->
// IPU: what `apply` and --keep-placement evaluate is a sharding config or
// a model's annotations as written, and those may put one pipeline stage on
// several IPUs (PopART refuses such a plan when it compiles; autoshard
// evaluates it with a warning, and `split` refuses it). A plan a strategy
// makes runs each stage on one IPU: ipu == pipeline_stage on every node,
// except that the last stage may return to IPU 0 (Note [A stage revisits an
// IPU], costmodel/plan_evaluation.h): then stages outnumber IPUs.
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
  // The stages used: max stage + 1 (0 when empty).
  int num_stages() const {
    int32_t max_stage = -1;
    for (int32_t s : pipeline_stage) max_stage = std::max(max_stage, s);
    return max_stage + 1;
  }
  // The IPU of each stage 0..num_stages()-1 when every stage runs on one
  // IPU (-1 for a stage no node is on); empty when some stage has nodes on
  // two IPUs (a hand-written config, Note [A placement is per node]).
  std::vector<int32_t> IpuOfStage() const {
    std::vector<int32_t> out(num_stages(), -1);
    for (size_t n = 0; n < ipu.size(); ++n) {
      int32_t& d = out[pipeline_stage[n]];
      if (d >= 0 && d != ipu[n]) return {};
      d = ipu[n];
    }
    return out;
  }
  // True when some IPU runs two or more stages, each stage on one IPU (the
  // plans whose performance is costed per stage, EvaluatePlacement).
  bool RevisitsAnIpu() const {
    const std::vector<int32_t> of_stage = IpuOfStage();
    std::vector<int32_t> stages_on(num_ipus(), 0);
    for (int32_t d : of_stage) {
      if (d >= 0 && ++stages_on[d] > 1) return true;
    }
    return false;
  }
};

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_PLACEMENT_H_
