#include "tests/calibration_cases.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "tests/calibration_models.h"

namespace autoshard::testing {

absl::StatusOr<proto::CalibrationFacts> LoadCalibrationFacts(
    const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read"));
  std::stringstream text;
  text << in.rdbuf();
  proto::CalibrationFacts facts;
  if (!google::protobuf::TextFormat::ParseFromString(text.str(), &facts)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a text-format CalibrationFacts"));
  }
  return facts;
}

absl::StatusOr<proto::DeviceProfile> RunProfile(
    const proto::CalibrationFact& fact, const proto::DeviceProfile& profile) {
  const int32_t io = fact.io_tiles();
  if (io < 0 || io >= profile.tiles_per_ipu()) {
    return absl::InvalidArgumentError(
        absl::StrCat(fact.id(), ": io_tiles ", io, " not in [0, ",
                     profile.tiles_per_ipu(), ")"));
  }
  proto::DeviceProfile run = profile;
  if (io == 0) return run;
  const int32_t compute = profile.tiles_per_ipu() - io;
  const double share = static_cast<double>(compute) / profile.tiles_per_ipu();
  run.set_tiles_per_ipu(compute);
  run.set_peak_fp16_flops_per_s(profile.peak_fp16_flops_per_s() * share);
  run.set_peak_fp32_flops_per_s(profile.peak_fp32_flops_per_s() * share);
  return run;
}

absl::StatusOr<Plan> PlanFact(const proto::CalibrationFact& fact,
                              const proto::DeviceProfile& base) {
  auto profile = RunProfile(fact, base);
  if (!profile.ok()) return profile.status();
  auto model = BuildCalibrationModel(fact.model(), fact.batch(),
                                     fact.seq() > 0 ? fact.seq() : 1);
  if (!model.ok()) return model.status();
  Options options;
  options.num_ipus = 1;
  options.strategy = "raw";
  options.device = *profile;
  options.precision =
      fact.precision() == "fp16" ? Precision::kFp16 : Precision::kFp32;
  if (fact.available_memory_proportion() > 0) {  // 0: the profile's
    options.available_memory_proportion = fact.available_memory_proportion();
  }
  return PlanModel(*model, options);
}

double PredictedFigure(const proto::CalibrationFact& fact, const Plan& plan) {
  const proto::Plan& p = plan.proto;
  if (fact.kind() == "throughput") return p.performance().throughput_per_s();
  if (fact.kind() == "latency") return p.performance().latency_s();
  if (fact.kind() == "fits") return p.fits() ? 1 : 0;
  return static_cast<double>(p.ipus(0).memory().total_bytes());
}

int64_t MemoryFigure(const proto::CalibrationFact& fact,
                     const std::string& category) {
  for (const auto& m : fact.memory()) {
    if (m.category() == category) return m.bytes();
  }
  return 0;
}

}  // namespace autoshard::testing
