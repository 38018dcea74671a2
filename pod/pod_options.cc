#include "pod/pod_options.h"

#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace autoshard::pod {

absl::Status PodOptions::Validate() const {
  if (total_ipus < 1 || total_ipus > kMaxPodIpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--total-ipus must be from 1 to ", kMaxPodIpus, ", got ", total_ipus));
  }
  for (int b : batch_sizes) {
    if (b < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--batch-size must be at least 1, got ", b));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> ParseBatchSizes(const std::string& spec) {
  std::set<int> sizes;
  if (spec == "auto") {
    for (int b = 1; b <= kAutoBatchMax; b *= 2) sizes.insert(b);
  } else {
    for (absl::string_view part : absl::StrSplit(spec, ',')) {
      int b = 0;
      if (!absl::SimpleAtoi(part, &b) || b < 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--batch-size '", spec,
            "': expected B, auto, or a list B1,B2,... of integers >= 1"));
      }
      sizes.insert(b);
    }
  }
  return std::vector<int>(sizes.begin(), sizes.end());
}

}  // namespace autoshard::pod
