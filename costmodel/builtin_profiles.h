// The built-in device profiles' text (DESIGN.md §3.2): the chips' published
// figures and the constants fitted to the calibration facts
// (docs/calibration.md, costmodel/calibration/facts.textproto). Internal to
// costmodel/: LoadDeviceProfile (device_profile.h) parses and validates it.
#ifndef AUTOSHARD_COSTMODEL_BUILTIN_PROFILES_H_
#define AUTOSHARD_COSTMODEL_BUILTIN_PROFILES_H_

#include <string>

#include "absl/strings/string_view.h"

namespace autoshard::internal {

// The text-format DeviceProfile of built-in `name` ("ipu1", "ipu2",
// "ipu21", "c600"), or "" for another name.
std::string BuiltinProfileText(absl::string_view name);

}  // namespace autoshard::internal

#endif  // AUTOSHARD_COSTMODEL_BUILTIN_PROFILES_H_
