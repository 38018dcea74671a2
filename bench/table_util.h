// What the corpus tables (bench/strategy_table.cc, bench/bound_table.cc)
// share: the --ipus list, a model's name in a row, the options they plan
// with.
#ifndef AUTOSHARD_BENCH_TABLE_UTIL_H_
#define AUTOSHARD_BENCH_TABLE_UTIL_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "graph/model_io.h"
#include "sharder/options.h"

namespace autoshard::bench {

// "2,4,8" -> {2, 4, 8}; nullopt when a count is not an integer >= 1.
inline std::optional<std::vector<int>> ParseIpus(const char* text) {
  std::vector<int> ipus;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int k = 0;
    if (!absl::SimpleAtoi(part, &k) || k < 1) return std::nullopt;
    ipus.push_back(k);
  }
  return ipus;
}

// The model's path below ".../models/", else the path.
inline std::string ModelLabel(const std::string& path) {
  if (size_t slash = path.rfind("/models/"); slash != std::string::npos)
    return path.substr(slash + 8);
  return path;
}

// The options a table plans `loaded` with at k IPUs: ipu2, batch 1, weights
// on-chip (the tables measure the split, as they did before auto became
// --weights-location's default: a plan that does not fit stays on-chip
// rather than paying Streaming Memory loads), every other option at its
// default.
inline Options TableOptions(const LoadedModel& loaded, int k) {
  Options options;
  options.weights_location = "on-chip";
  options.num_ipus = k;
  options.shapes.batch_size = 1;
  options.model_dir = loaded.path.parent_path();
  options.external_files = loaded.external_files;
  return options;
}

}  // namespace autoshard::bench

#endif  // AUTOSHARD_BENCH_TABLE_UTIL_H_
