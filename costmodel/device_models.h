// The device models of one problem on one chip, one per available memory
// proportion, each built on first use and kept (issue 26: a run builds the
// DeviceModel of a proportion once, not once per strategy candidate). As
// LLVM's analysis manager caches an analysis until it is invalidated, this
// caches until it is destroyed: the problem and the profile it was made from
// never change.
#ifndef AUTOSHARD_COSTMODEL_DEVICE_MODELS_H_
#define AUTOSHARD_COSTMODEL_DEVICE_MODELS_H_

#include <map>
#include <memory>
#include <mutex>

#include "costmodel/device_model.h"
#include "costmodel/precision.h"
#include "costmodel/problem.h"
#include "proto/device.pb.h"

namespace autoshard {

class DeviceModels {
 public:
  // `problem` must outlive this (and every model it hands out). `profile` is
  // the chip with the run's available memory proportion (the user's, or the
  // profile's own).
  DeviceModels(const ShardingProblem& problem, proto::DeviceProfile profile,
               Precision precision)
      : problem_(problem),
        profile_(std::move(profile)),
        precision_(precision) {}
  DeviceModels(const DeviceModels&) = delete;
  DeviceModels& operator=(const DeviceModels&) = delete;

  // The model of the profile with its own proportion.
  const DeviceModel& Get() const {
    return At(profile_.available_memory_proportion());
  }
  // The model of the profile with available memory proportion `proportion`
  // (WithMemoryProportion), built on the first call with it. The reference
  // stays valid as long as this does. Safe to call from several threads.
  const DeviceModel& At(double proportion) const;

  const ShardingProblem& problem() const { return problem_; }
  const proto::DeviceProfile& profile() const { return profile_; }
  Precision precision() const { return precision_; }

 private:
  const ShardingProblem& problem_;
  const proto::DeviceProfile profile_;
  const Precision precision_;
  mutable std::mutex mutex_;
  mutable std::map<double, std::unique_ptr<const DeviceModel>> models_;
};

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_DEVICE_MODELS_H_
