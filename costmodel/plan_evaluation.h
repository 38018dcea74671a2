// One evaluation of a split: the tile-memory model on every IPU and the
// performance model (DESIGN.md §3.3, §3.4). Every "cost each IPU, does the
// split fit" question of the planner, the strategies and `inspect` is this
// one call.
#ifndef AUTOSHARD_COSTMODEL_PLAN_EVALUATION_H_
#define AUTOSHARD_COSTMODEL_PLAN_EVALUATION_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "costmodel/device_model.h"
#include "graph/placement.h"
#include "proto/device.pb.h"

namespace autoshard {

struct PlanEvaluation {
  std::vector<IpuMemory> memory;  // per IPU 0..num_ipus-1
  bool fits = true;               // every IPU fits
  int64_t max_tile_bytes = 0;     // the fullest tile over all IPUs (bytes)
  // The IPU holding that tile, the first one on a tie: when the split does
  // not fit, the IPU whose overflow the compiler would name.
  int32_t fullest_ipu = 0;
  Performance performance;
};

// Evaluates the split where node i runs on ipu_of_node[i] (IPUs
// 0..num_ipus-1, `batch` samples per pipeline step, >= 1) with `model`.
// Cost: num_ipus x DeviceModel::EvaluateMemory + EvaluatePerformance.
PlanEvaluation EvaluatePlan(const DeviceModel& model,
                            absl::Span<const int32_t> ipu_of_node, int num_ipus,
                            int64_t batch);

// Note [A stage revisits an IPU]
// A plan is node -> pipeline stage plus stage -> IPU, and an IPU may run
// several stages: Graphcore's GPT-2 puts the LM head, the last stage, back
// on IPU 0 beside the token embedding whose weight it shares (graphcore/
// examples nlp/gpt2/pytorch; PopART refuses to copy a variable between
// IPUs when pipelining, willow/src/transforms/pipeline.cpp). Each micro-batch
// an IPU runs every one of its stages in turn, so:
// - performance: an IPU's time is the sum of its nodes' times plus, per
//   stage it runs, that stage's copies in and out (ComputeStageCutBytes,
//   one transfer_fixed_s per stage and direction that copies anything); the
//   bottleneck is the slowest IPU, the latency the sum over IPUs;
// - memory: per IPU, its nodes of every stage in topological order, so a
//   weight read by two of its stages is held once (the IPU's weights are
//   each distinct weight once), and a tensor its first stage keeps for its
//   last stays live in between.
// When every stage runs on its own IPU this is EvaluatePlan exactly.

// Evaluates `placement` (each stage on one IPU: Placement::IpuOfStage not
// empty when it revisits an IPU), `batch` samples per pipeline step, as
// Note [A stage revisits an IPU] says; a placement that revisits no IPU (or
// puts a stage on two IPUs) is EvaluatePlan(model, placement.ipu,
// placement.num_ipus(), batch). Performance::stage_time_s is per IPU.
PlanEvaluation EvaluatePlacement(const DeviceModel& model,
                                 const Placement& placement, int64_t batch);

// `device` with its available memory proportion replaced by `proportion`,
// in (0, 1]: strategies pass proportions as values, never by changing a
// profile they share.
proto::DeviceProfile WithMemoryProportion(const proto::DeviceProfile& device,
                                          double proportion);

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_PLAN_EVALUATION_H_
