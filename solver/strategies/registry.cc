#include "solver/strategies/registry.h"

#include "absl/strings/str_cat.h"
#include "solver/strategies/builtin.h"

namespace autoshard {

const std::vector<StrategyEntry>& Strategies() {
  static const auto* const entries = new std::vector<StrategyEntry>{
      {&AutoStrategyInstance(),
       "the best of raw, search, optimal and search moves from optimal's "
       "split"},
      {&OptimalStrategyInstance(),
       "the fastest fitting slicing of a topological order (dynamic "
       "programming)"},
      {&SearchStrategyInstance(),
       "raw, then move boundary subgraphs until every IPU fits the "
       "tile-memory model"},
      {&RawStrategyInstance(), "PopRT's bytes-balanced split"},
  };
  return *entries;
}

const Strategy* FindStrategy(absl::string_view name) {
  for (const StrategyEntry& e : Strategies()) {
    if (e.strategy->name() == name) return e.strategy;
  }
  return nullptr;
}

std::vector<std::string> StrategyNames() {
  std::vector<std::string> names;
  for (const StrategyEntry& e : Strategies()) {
    names.emplace_back(e.strategy->name());
  }
  return names;
}

std::string StrategiesHelp() {
  std::string help;
  for (const StrategyEntry& e : Strategies()) {
    absl::StrAppend(&help, help.empty() ? "" : "; ", e.strategy->name(),
                    help.empty() ? " (default)" : "", ": ", e.help);
  }
  return help;
}

}  // namespace autoshard
