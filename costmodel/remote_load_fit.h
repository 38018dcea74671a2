// Fitting the Streaming Memory bandwidth (issue 30 point 2): the built-in
// profiles' streaming_memory_bytes_per_s (20 GB/s per IPU) is an ESTIMATE,
// as no published per-IPU figure was found. A measured remote load replaces
// it: `autoshard calibrate --remote-load BYTES,SECONDS` or a facts file's
// facts of kind "remote_load" (docs/calibration.md §8).
//
// Note [Remote-load facts]
// One fact is one unsharded remote load of B bytes onto one IPU that took
// S seconds (e.g. a PopXL ops.remote_load of one remote_variable, timed by
// the profiler or by the host around a program holding only the load). In
// a CalibrationFact: kind "remote_load", figure = S, and one MemoryFigure
// with category "loaded" and bytes = B. The model of a load is
// B / bandwidth (Note [Remote weights], costmodel/weight_location.h, with no
// fixed cost), so the fit is least squares of S_i = B_i x over x = 1 /
// bandwidth: x = Σ B_i S_i / Σ B_i², bandwidth = Σ B_i² / Σ B_i S_i. One
// fact gives B / S; e.g. 1e9 B in 0.04 s and 2e9 B in 0.1 s give
// Σ B² = 5e18, Σ B S = 0.24e9, 20.833 GB/s.
#ifndef AUTOSHARD_COSTMODEL_REMOTE_LOAD_FIT_H_
#define AUTOSHARD_COSTMODEL_REMOTE_LOAD_FIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/calibration.pb.h"
#include "proto/device.pb.h"

namespace autoshard {

struct RemoteLoadFact {
  int64_t bytes = 0;   // B, loaded onto one IPU, unsharded
  double seconds = 0;  // S, the load's time
  std::string source;  // for messages: the fact's id or the flag
};

// "BYTES,SECONDS" (--remote-load) as a fact, e.g. "1000000000,0.05".
// InvalidArgument naming the flag's text when it is not two positive
// numbers.
absl::StatusOr<RemoteLoadFact> ParseRemoteLoad(const std::string& text);

// The facts of kind "remote_load" in `facts` (Note [Remote-load facts]);
// `device`, when not empty, keeps only facts about that profile (or naming
// none). InvalidArgument naming the fact when one has no "loaded" bytes or
// a figure <= 0.
absl::StatusOr<std::vector<RemoteLoadFact>> RemoteLoadFactsOf(
    const proto::CalibrationFacts& facts, const std::string& device);

// Bytes per second, Note [Remote-load facts]. InvalidArgument when `facts`
// is empty or a fact's bytes or seconds are <= 0 (naming it).
absl::StatusOr<double> FitStreamingBandwidth(
    const std::vector<RemoteLoadFact>& facts);

// Sets `profile`'s streaming_memory_bytes_per_s to the fit and appends to
// its calibration status what it was fitted to. Errors: the fit's, and
// InvalidArgument when the profile has no Streaming Memory
// (streaming_memory_bytes_per_machine 0: nothing to load from).
absl::Status CalibrateStreamingBandwidth(
    const std::vector<RemoteLoadFact>& facts, proto::DeviceProfile* profile);

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_REMOTE_LOAD_FIT_H_
