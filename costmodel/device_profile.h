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
// bytes per tile in 1..2^40, peaks and link bandwidth > 0, 0 < available
// memory proportion <= 1, overhead >= 0, grain in 1..bytes per tile,
// efficiencies in (0, 1], code bytes >= 0; tile_fixed_bytes and codelet
// bytes in 0..2^40, transfer_fixed_s and class overheads finite
// and >= 0, class output_bytes_per_s finite and >= 0, calibration error
// bands in [0, 1].
absl::Status ValidateDeviceProfile(const proto::DeviceProfile& profile);

// The profile's entry for `op_class`, or its "other" entry, or a neutral one
// (efficiency 1, no code) when it has neither.
const proto::OpClassProfile& OpClassOf(const proto::DeviceProfile& profile,
                                       absl::string_view op_class);

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_DEVICE_PROFILE_H_
