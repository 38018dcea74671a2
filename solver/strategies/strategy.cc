#include "solver/strategies/strategy.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "solver/strategies/constraints.h"
#include "solver/strategies/sharding_points.h"

namespace autoshard {

StrategyResult Evaluated(const StrategyContext& context, Assignment assignment,
                         double proportion) {
  StrategyResult r;
  const DeviceModel& model = context.Models().At(proportion);
  // Note [Constraints in every strategy] (constraints.h).
  if (context.problem->HasConstraints()) {
    r.broken_constraint = BrokenConstraint(*context.problem, assignment.ipu);
    if (!r.broken_constraint.empty() && !assignment.RevisitsAnIpu()) {
      std::optional<std::vector<int32_t>> repaired = RepairToConstraints(
          *context.problem, model, context.num_ipus, assignment.ipu);
      if (repaired) {
        assignment = Assignment{*repaired, *repaired};
        r.broken_constraint.clear();
      }
    }
  }
  // Note [Filling empty IPUs] (constraints.h), on a split whose stages are
  // its IPUs.
  if (assignment.pipeline_stage == assignment.ipu) {
    std::vector<uint8_t> used(context.num_ipus, 0);
    for (int32_t d : assignment.ipu)
      if (d >= 0 && d < context.num_ipus) used[d] = 1;
    std::vector<int32_t> filled = assignment.ipu;
    if (std::count(used.begin(), used.end(), 0) > 0 &&
        ValidateMonotone(*context.problem, assignment).ok() &&
        FillEmptyIpus(*context.problem, &model, context.num_ipus, &filled)) {
      assignment = Assignment{filled, filled};
    }
  }
  r.evaluation = assignment.RevisitsAnIpu()
                     ? EvaluatePlacement(model, assignment, context.batch)
                     : EvaluatePlan(model, assignment.ipu, context.num_ipus,
                                    context.batch);
  r.assignment = std::move(assignment);
  r.available_memory_proportion = proportion;
  return r;
}

const DeviceModels& StrategyContext::Models() const {
  if (device_models != nullptr) return *device_models;
  if (own_device_models_ == nullptr) {
    own_device_models_ =
        std::make_shared<const DeviceModels>(*problem, device, precision);
  }
  return *own_device_models_;
}

double SecondsSince(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

}  // namespace autoshard
