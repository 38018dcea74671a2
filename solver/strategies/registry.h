// The one list of strategies (DESIGN.md §4): what `--strategy` accepts, its
// help text, Options::Validate's message and the planner all read it. To add
// a strategy: implement solver/strategies/strategy.h in a file of its own,
// and add it here with one line of help.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_REGISTRY_H_
#define AUTOSHARD_SOLVER_STRATEGIES_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "solver/strategies/strategy.h"

namespace autoshard {

struct StrategyEntry {
  const Strategy* strategy;  // static, never null
  const char* help;          // one clause for --help
};

// Every strategy, the default (auto) first, as --help lists them.
const std::vector<StrategyEntry>& Strategies();

// The strategy called `name`, or nullptr.
const Strategy* FindStrategy(absl::string_view name);

// Their names, in the order of Strategies().
std::vector<std::string> StrategyNames();

// "auto (default): ...; optimal: ...; ...": the --strategy help.
std::string StrategiesHelp();

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_REGISTRY_H_
