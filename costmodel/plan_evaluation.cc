#include "costmodel/plan_evaluation.h"

#include "graph/step_counts.h"

namespace autoshard {

PlanEvaluation EvaluatePlan(const DeviceModel& model,
                            absl::Span<const int32_t> ipu_of_node, int num_ipus,
                            int64_t batch) {
  ++ThreadStepCounts().plan_evaluations;
  PlanEvaluation e;
  e.memory.reserve(num_ipus);
  for (int32_t d = 0; d < num_ipus; ++d) {
    e.memory.push_back(model.EvaluateMemory(ipu_of_node, d));
    const IpuMemory& m = e.memory.back();
    e.fits &= m.fits;
    if (d == 0 || m.max_tile_bytes > e.max_tile_bytes) {
      e.max_tile_bytes = m.max_tile_bytes;
      e.fullest_ipu = d;
    }
  }
  e.performance = model.EvaluatePerformance(ipu_of_node, num_ipus, batch);
  return e;
}

proto::DeviceProfile WithMemoryProportion(const proto::DeviceProfile& device,
                                          double proportion) {
  proto::DeviceProfile out = device;
  out.set_available_memory_proportion(proportion);
  return out;
}

}  // namespace autoshard
