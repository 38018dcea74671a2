// How far to trust a plan's figures (docs/calibration.md §5): the profile's
// calibration in one line, and whether a fullest tile is within the
// profile's memory error band of the tile capacity.
#ifndef AUTOSHARD_COSTMODEL_CALIBRATION_H_
#define AUTOSHARD_COSTMODEL_CALIBRATION_H_

#include <cstdint>
#include <string>

#include "proto/device.pb.h"

namespace autoshard {

// "<profile>: <status>; error bands: throughput +-15%, fullest tile +-15%
// of a tile", or "<profile>: not calibrated ..." when the profile has no
// calibration status.
std::string CalibrationLine(const proto::DeviceProfile& profile);

// True when |bytes_per_tile - max_tile_bytes| <= memory_error_band x
// bytes_per_tile: the model cannot tell whether that tile fits. A profile
// without a band (0) is never within it.
bool WithinMemoryBand(const proto::DeviceProfile& profile,
                      int64_t max_tile_bytes);

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_CALIBRATION_H_
