#include "costmodel/plan_evaluation.h"

#include <algorithm>

#include "base/step_counts.h"
#include "costmodel/problem.h"

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

PlanEvaluation EvaluatePlacement(const DeviceModel& model,
                                 const Placement& placement, int64_t batch) {
  const int num_ipus = placement.num_ipus();
  if (!placement.RevisitsAnIpu())
    return EvaluatePlan(model, placement.ipu, num_ipus, batch);
  PlanEvaluation e = EvaluatePlan(model, placement.ipu, num_ipus, batch);
  // The performance per stage (the memory per IPU stays as it is).
  const std::vector<int32_t> ipu_of_stage = placement.IpuOfStage();
  const CutBytes cut = ComputeStageCutBytes(
      model.problem(), placement.pipeline_stage, ipu_of_stage);
  Performance& perf = e.performance;
  perf.stage_time_s.assign(num_ipus, 0);
  for (int32_t node = 0; node < model.problem().num_nodes(); ++node)
    perf.stage_time_s[placement.ipu[node]] += model.NodeTime(node);
  for (size_t s = 0; s < ipu_of_stage.size(); ++s) {
    if (ipu_of_stage[s] < 0) continue;
    perf.stage_time_s[ipu_of_stage[s]] +=
        model.CopySeconds(static_cast<double>(cut.in_bytes[s])) +
        model.CopySeconds(static_cast<double>(cut.out_bytes[s]));
  }
  model.AddRemoteLoads(placement.ipu, &perf.stage_time_s);
  perf.bottleneck_s = 0;
  perf.latency_s = 0;
  for (double t : perf.stage_time_s) {
    perf.bottleneck_s = std::max(perf.bottleneck_s, t);
    perf.latency_s += t;
  }
  // The step's fixed time once per batch, as DeviceModel::Evaluate adds it.
  const double step_s = perf.bottleneck_s + model.profile().step_fixed_s();
  perf.latency_s += model.profile().step_fixed_s();
  perf.throughput_per_s =
      step_s > 0 ? static_cast<double>(std::max<int64_t>(batch, 1)) / step_s
                 : 0;
  return e;
}

proto::DeviceProfile WithMemoryProportion(const proto::DeviceProfile& device,
                                          double proportion) {
  proto::DeviceProfile out = device;
  out.set_available_memory_proportion(proportion);
  return out;
}

}  // namespace autoshard
