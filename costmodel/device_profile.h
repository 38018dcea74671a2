// Device profiles (DESIGN.md §3.2): the built-in IPUs and custom text-proto
// files. Every figure a model of the chip uses lives in the profile.
#ifndef AUTOSHARD_COSTMODEL_DEVICE_PROFILE_H_
#define AUTOSHARD_COSTMODEL_DEVICE_PROFILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/device.pb.h"

namespace autoshard {

// Names of the built-in profiles: "ipu1", "ipu2" (the default), "ipu21",
// "c600" (costmodel/builtin_profiles.cc; docs/calibration.md).
std::vector<std::string> BuiltinDeviceNames();

// A built-in profile by name, or else a text-format DeviceProfile file at
// that path (which may name a built-in `base` and set only what differs).
// Errors: NotFound for a name that is neither; InvalidArgument (naming the
// file) for a file that does not parse or fails Validate.
absl::StatusOr<proto::DeviceProfile> LoadDeviceProfile(
    absl::string_view name_or_path);

// InvalidArgument naming the first field out of range: tiles in 1..2^20,
// bytes per tile in 1..2^40, peaks in 1e6..1e18 FLOP/s, link bandwidth in
// 1e3..1e15 B/s, available memory proportion in [1e-6, 1], overhead in
// 0..1 s, grain in 1..bytes per tile, efficiencies in [1e-6, 1], code bytes
// in 0..2^40; tile_fixed_bytes and codelet bytes in 0..2^40,
// transfer_fixed_s and class overheads finite and >= 0, class
// output_bytes_per_s finite and >= 0, calibration error bands in [0, 1]
// (NaN is in no range). The ranges keep every time the cost model sums
// finite.
absl::Status ValidateDeviceProfile(const proto::DeviceProfile& profile);

// The profile's entry for `op_class`, or its "other" entry, or a neutral one
// (efficiency 1, no code) when it has neither.
const proto::OpClassProfile& OpClassOf(const proto::DeviceProfile& profile,
                                       absl::string_view op_class);

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_DEVICE_PROFILE_H_
