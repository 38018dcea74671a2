// libFuzzer target: model bytes -> load checks + plan (DESIGN.md §6's
// bytes-in overload), with small budgets. The first byte picks the
// strategy and the IPU count; the rest is the model. A crash, a sanitizer
// report or an exception escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "sharder/autoshard.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const char* const kStrategies[] = {"raw", "search", "optimal", "auto"};
  autoshard::Options options;
  options.strategy = kStrategies[data[0] & 3];
  options.num_ipus = 1 + ((data[0] >> 2) & 3);
  options.max_search_s = 0.05;
  options.max_candidates = 50;
  options.shapes.batch_size = (data[0] & 0x40) ? 2 : 0;
  const absl::string_view bytes(reinterpret_cast<const char*>(data + 1),
                                size - 1);
  autoshard::Plan plan;
  (void)autoshard::ShardModelBytes(bytes, options, &plan);
  return 0;
}
