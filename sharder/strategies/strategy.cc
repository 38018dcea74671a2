#include "sharder/strategies/strategy.h"

#include <utility>

namespace autoshard {

StrategyResult Evaluated(const StrategyContext& context, Assignment assignment,
                         double proportion) {
  StrategyResult r;
  const DeviceModel model(*context.problem,
                          WithMemoryProportion(context.device, proportion),
                          context.precision);
  r.evaluation =
      EvaluatePlan(model, assignment.ipu, context.num_ipus, context.batch);
  r.assignment = std::move(assignment);
  r.available_memory_proportion = proportion;
  return r;
}

double SecondsSince(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

}  // namespace autoshard
