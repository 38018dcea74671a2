#include "costmodel/device_models.h"

#include "costmodel/plan_evaluation.h"

namespace autoshard {

const DeviceModel& DeviceModels::At(double proportion) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<const DeviceModel>& model = models_[proportion];
  if (model == nullptr) {
    model = std::make_unique<const DeviceModel>(
        problem_, WithMemoryProportion(profile_, proportion), precision_);
  }
  return *model;
}

}  // namespace autoshard
