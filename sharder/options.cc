#include "sharder/options.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "solver/strategies/registry.h"

namespace autoshard {

absl::Status Options::Validate() const {
  if (num_ipus < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--num-ipus must be at least 1 (or auto), got ", num_ipus));
  }
  if (max_ipus < 1 || max_ipus > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-ipus must be from 1 to 1024, got ", max_ipus));
  }
  if (FindStrategy(strategy) == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--strategy '", strategy, "' is unknown (available: ",
                     absl::StrJoin(StrategyNames(), ", "), ")"));
  }
  if (weights_location != "on-chip" && weights_location != "remote" &&
      weights_location != "auto") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--weights-location must be auto, on-chip or remote, got '",
        weights_location, "'"));
  }
  if (shard_over < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shard-over must be at least 1, got ", shard_over));
  }
  if (retrieval_mode != "one_per_group" && retrieval_mode != "all_replicas") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--retrieval-mode must be one_per_group or all_replicas, got '",
        retrieval_mode, "'"));
  }
  if (weights != "constant" && weights != "variable") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--weights must be constant or variable, got '", weights, "'"));
  }
  if (max_candidates <= 0) {
    return absl::InvalidArgumentError("--max-candidates must be positive");
  }
  // Only shard plans where weights live (sharder/weight_locations.h);
  // apply and --keep-placement evaluate a given split with on-chip weights,
  // and a problem file has no field for remote loads: remote is refused
  // there, auto (the default) is on-chip.
  if (weights_location == "remote" && keep_placement) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--weights-location ", weights_location,
        " is planned by shard; --keep-placement evaluates the model's split "
        "with its weights on-chip"));
  }
  if (weights_location == "remote" && keep_problem) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--write-problem: a problem file cannot carry --weights-location ",
        weights_location, " (remote loads have no field there)"));
  }
  if (keep_placement && !pins.empty()) {
    return absl::InvalidArgumentError(
        "--pin plans a split, --keep-placement evaluates the model's own: "
        "give one of them");
  }
  if (jobs < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--jobs must be at least 1, got ", jobs));
  }
  // --compile-cmd works with every strategy: search compiles its candidates
  // as it goes, the others' splits are compiled afterwards, in order
  // (sharder/compile_judge.h). Without a compile command --jobs counts
  // nothing here (the CLI's batch mode reads it as models at once).
  if (optimal_perf && !FindStrategy(strategy)->optimal_perf()) {
    // Listed from the simplest (the registry lists the default first).
    std::vector<std::string> able;
    for (auto it = Strategies().rbegin(); it != Strategies().rend(); ++it) {
      if (it->strategy->optimal_perf()) able.emplace_back(it->strategy->name());
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "--optimal-perf needs --strategy ", absl::StrJoin(able, " or ")));
  }
  if (!(compile_timeout_s > 0)) {
    return absl::InvalidArgumentError("--compile-timeout must be positive");
  }
  if (!(bound_s >= 0)) {
    return absl::InvalidArgumentError(
        "--bound-seconds must be 0 (solver off) or more");
  }
  if (!(max_search_s > 0)) {
    return absl::InvalidArgumentError("--max-search-seconds must be positive");
  }
  if (shapes.batch_size < 0) {
    return absl::InvalidArgumentError("--batch-size must be positive");
  }
  if (available_memory_proportion && !(*available_memory_proportion > 0 &&
                                       *available_memory_proportion <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--available-memory-proportion must be in (0, 1], got ",
                     *available_memory_proportion));
  }
  return absl::OkStatus();
}

}  // namespace autoshard
