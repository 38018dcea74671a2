#include "costmodel/remote_load_fit.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace autoshard {

absl::StatusOr<RemoteLoadFact> ParseRemoteLoad(const std::string& text) {
  const std::vector<std::string> parts = absl::StrSplit(text, ',');
  RemoteLoadFact f;
  f.source = absl::StrCat("--remote-load ", text);
  double bytes = 0;
  if (parts.size() != 2 ||
      !absl::SimpleAtod(absl::StripAsciiWhitespace(parts[0]), &bytes) ||
      !absl::SimpleAtod(absl::StripAsciiWhitespace(parts[1]), &f.seconds) ||
      !(bytes >= 1) || !(f.seconds > 0) || !std::isfinite(bytes) ||
      !std::isfinite(f.seconds) || bytes > 9e18) {
    return absl::InvalidArgumentError(
        absl::StrCat(f.source,
                     ": want BYTES,SECONDS, both positive (one unsharded "
                     "remote load onto one IPU, e.g. 1000000000,0.05)"));
  }
  f.bytes = std::llround(bytes);
  return f;
}

absl::StatusOr<std::vector<RemoteLoadFact>> RemoteLoadFactsOf(
    const proto::CalibrationFacts& facts, const std::string& device) {
  std::vector<RemoteLoadFact> out;
  for (const proto::CalibrationFact& f : facts.facts()) {
    if (f.kind() != "remote_load") continue;
    if (!device.empty() && !f.device().empty() && f.device() != device)
      continue;
    RemoteLoadFact r;
    r.source = absl::StrCat("fact '", f.id(), "'");
    r.seconds = f.figure();
    int loaded = 0;
    for (const proto::MemoryFigure& m : f.memory()) {
      if (m.category() != "loaded") continue;
      r.bytes = m.bytes();
      ++loaded;
    }
    if (loaded != 1 || r.bytes <= 0 || !(r.seconds > 0) ||
        !std::isfinite(r.seconds)) {
      return absl::InvalidArgumentError(absl::StrCat(
          r.source,
          ": a remote_load fact needs a finite figure (seconds) > 0 and one "
          "memory { category: \"loaded\" bytes: B } with B > 0"));
    }
    out.push_back(r);
  }
  return out;
}

absl::StatusOr<double> FitStreamingBandwidth(
    const std::vector<RemoteLoadFact>& facts) {
  if (facts.empty()) {
    return absl::InvalidArgumentError(
        "no remote load to fit the Streaming Memory bandwidth to");
  }
  double bb = 0, bs = 0;
  for (const RemoteLoadFact& f : facts) {
    if (f.bytes <= 0 || !(f.seconds > 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          f.source, ": a remote load needs bytes and seconds > 0"));
    }
    const double b = static_cast<double>(f.bytes);
    bb += b * b;
    bs += b * f.seconds;
  }
  const double bytes_per_s = bb / bs;
  if (!std::isfinite(bytes_per_s) || !(bytes_per_s > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the remote loads give no finite bandwidth (", bytes_per_s,
                     " bytes/s): check their bytes and seconds"));
  }
  return bytes_per_s;
}

absl::Status CalibrateStreamingBandwidth(
    const std::vector<RemoteLoadFact>& facts, proto::DeviceProfile* profile) {
  if (profile->streaming_memory_bytes_per_machine() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--remote-load: the device profile '", profile->name(),
        "' has no Streaming Memory (streaming_memory_bytes_per_machine 0): "
        "nothing to fit a remote load to"));
  }
  absl::StatusOr<double> bandwidth = FitStreamingBandwidth(facts);
  if (!bandwidth.ok()) return bandwidth.status();
  profile->set_streaming_memory_bytes_per_s(*bandwidth);
  // The source said what the old figure was (an estimate): say first that
  // it is replaced.
  profile->set_streaming_memory_source(absl::StrCat(
      absl::StrFormat("bandwidth %.4g GB/s per IPU fitted by autoshard "
                      "calibrate to %d measured remote load%s, replacing the "
                      "profile's; ",
                      *bandwidth / 1e9, facts.size(),
                      facts.size() == 1 ? "" : "s"),
      profile->streaming_memory_source()));
  proto::Calibration* cal = profile->mutable_calibration();
  cal->set_status(absl::StrCat(
      cal->status(), cal->status().empty() ? "" : "; ",
      absl::StrFormat("Streaming Memory %.4g GB/s per IPU fitted to %d "
                      "remote load%s",
                      *bandwidth / 1e9, facts.size(),
                      facts.size() == 1 ? "" : "s")));
  return absl::OkStatus();
}

}  // namespace autoshard
