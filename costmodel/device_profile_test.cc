#include "costmodel/device_profile.h"

#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace autoshard {
namespace {

using ::testing::HasSubstr;

// Each field set to a value that passed validation before and made every
// stage time inf (or 0, or NaN), and the message that refuses it now.
TEST(DeviceProfileRangesTest, ExtremeFieldsAreRefused) {
  const double kMax = std::numeric_limits<double>::max();  // 1.797e308
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  const struct {
    void (*set)(proto::DeviceProfile*, double);
    double value;
    const char* message;
  } kCases[] = {
      {[](proto::DeviceProfile* p, double v) { p->set_op_overhead_s(v); }, kMax,
       "op_overhead_s must be in 0..1"},
      {[](proto::DeviceProfile* p, double v) { p->set_op_overhead_s(v); }, kNan,
       "op_overhead_s must be in 0..1"},
      {[](proto::DeviceProfile* p, double v) {
         p->set_peak_fp32_flops_per_s(v);
       },
       1e-300, "peak_fp32_flops_per_s must be in 1e6..1e18"},
      {[](proto::DeviceProfile* p, double v) {
         p->set_peak_fp16_flops_per_s(v);
       },
       kMax, "peak_fp16_flops_per_s must be in 1e6..1e18"},
      {[](proto::DeviceProfile* p, double v) { p->set_link_bytes_per_s(v); },
       1e-300, "link_bytes_per_s must be in 1e3..1e15"},
      {[](proto::DeviceProfile* p, double v) {
         p->set_available_memory_proportion(v);
       },
       1e-300, "available_memory_proportion must be in [1e-6, 1]"},
      {[](proto::DeviceProfile* p, double v) {
         p->mutable_op_classes(0)->set_efficiency(v);
       },
       1e-300, "efficiency must be in [1e-6, 1]"},
      {[](proto::DeviceProfile* p, double v) {
         p->mutable_op_classes(0)->set_code_bytes_per_tile(
             static_cast<int64_t>(v));
       },
       1e15, "code_bytes_per_tile must be in 0..2^40"},
      {[](proto::DeviceProfile* p, double v) {
         p->mutable_op_classes(0)->set_work_grain_bytes(
             static_cast<int64_t>(v));
       },
       2e6, "work_grain_bytes must be in 0..1048576"},
      {[](proto::DeviceProfile* p, double v) { p->set_step_fixed_s(v); }, kNan,
       "step_fixed_s must be in [0, 1]"},
      {[](proto::DeviceProfile* p, double v) { p->set_step_fixed_s(v); }, -1,
       "step_fixed_s must be in [0, 1]"},
  };
  for (const auto& c : kCases) {
    absl::StatusOr<proto::DeviceProfile> ipu2 = LoadDeviceProfile("ipu2");
    ASSERT_TRUE(ipu2.ok());
    ASSERT_TRUE(ValidateDeviceProfile(*ipu2).ok());
    c.set(&*ipu2, c.value);
    EXPECT_THAT(ValidateDeviceProfile(*ipu2).message(), HasSubstr(c.message))
        << c.value;
  }
}

// The ends of each range are accepted: a 1 MFLOP/s chip with a 1 s
// overhead is slow, not invalid.
TEST(DeviceProfileRangesTest, RangeEndsAreAccepted) {
  absl::StatusOr<proto::DeviceProfile> p = LoadDeviceProfile("ipu2");
  ASSERT_TRUE(p.ok());
  p->set_peak_fp32_flops_per_s(1e6);
  p->set_peak_fp16_flops_per_s(1e18);
  p->set_link_bytes_per_s(1e3);
  p->set_op_overhead_s(1);
  p->set_available_memory_proportion(1e-6);
  EXPECT_TRUE(ValidateDeviceProfile(*p).ok()) << ValidateDeviceProfile(*p);
}

}  // namespace
}  // namespace autoshard
