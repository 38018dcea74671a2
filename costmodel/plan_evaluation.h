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

// `device` with its available memory proportion replaced by `proportion`,
// in (0, 1]: strategies pass proportions as values, never by changing a
// profile they share.
proto::DeviceProfile WithMemoryProportion(const proto::DeviceProfile& device,
                                          double proportion);

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_PLAN_EVALUATION_H_
