// The interface every strategy implements (DESIGN.md §4), in the spirit of
// XLA's HloPassInterface: a name and one Run. A strategy sees plain data
// (the ShardingProblem, the device profile, the budgets, an optional
// compiler as judge), never ONNX or CLI options, so each can be unit-tested
// on hand-written problems (tests/test_problems.h). The list of strategies
// is solver/strategies/registry.h.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_STRATEGY_H_
#define AUTOSHARD_SOLVER_STRATEGIES_STRATEGY_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "costmodel/device_models.h"
#include "costmodel/plan_evaluation.h"
#include "costmodel/precision.h"
#include "costmodel/problem.h"
#include "proto/device.pb.h"
#include "proto/plan.pb.h"
#include "solver/strategies/defaults.h"
#include "solver/strategies/oracle.h"
#include "solver/strategies/sharding_points.h"

namespace autoshard {

// What a strategy is given: one IPU count of one model.
struct StrategyContext {
  const ShardingProblem* problem = nullptr;  // outlives the Run
  // The chip, with the run's available memory proportion (the user's, or
  // the profile's): strategies that try lower ones say so in their result.
  proto::DeviceProfile device;
  Precision precision = Precision::kFp32;
  // The device models of `problem` on `device` at `precision`, one per
  // available memory proportion (costmodel/device_models.h): the planner
  // passes the model analysis's, so a run builds each once, whatever the
  // strategy and its candidates. When null, Models() makes them on first use
  // (contexts made by hand in tests).
  const DeviceModels* device_models = nullptr;
  // device_models, else the ones made for this context on first use.
  const DeviceModels& Models() const;
  // The device model with `device`'s own proportion: Models().Get().
  const DeviceModel& Model() const { return Models().Get(); }
  int num_ipus = 1;  // 1 .. problem->num_nodes()
  // --weights variable: a split is acceptable only when every weight's
  // readers run on one IPU (auto keeps only such splits; Note [Last stage
  // on IPU 0], solver/strategies/revisit.h).
  bool variable_weights = false;
  int64_t batch = 1;          // samples per pipeline step
  bool optimal_perf = false;  // search: keep going for the bottleneck
  // search: splits to evaluate at most.
  int64_t max_candidates = kDefaultMaxCandidates;
  double max_search_s = kDefaultMaxSearchSeconds;  // search, optimal's DPs
  // When the plan started: auto gives its last step what is left of
  // max_search_s since then.
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
  // search: about once a second, candidates tried and the closest split's
  // fullest tile (bytes); may be empty.
  std::function<void(int64_t, int64_t)> progress;
  // search: when set, a compiler judges every candidate (compile_oracle.h).
  SearchOracle oracle;

 private:
  mutable std::shared_ptr<const DeviceModels> own_device_models_;  // Models()
};

// A split a strategy found besides the one it chose: the next ones a
// compile command tries when the chosen split fails (--compile-cmd with
// auto or optimal, sharder/compile_judge.h).
struct RunnerUp {
  std::string strategy;  // auto's candidate name ("optimal", "ideal", ...)
  Assignment assignment;
  double available_memory_proportion = 0;
};

// What a strategy returns: a part every strategy fills (the split, its
// evaluation, warnings, a compiler's verdict, other splits worth
// compiling), and the strategy's own summary, which only it knows.
struct StrategyResult {
  Assignment assignment;
  // The proportion the split is evaluated with: the context's, or a lower
  // one the search settled on (DESIGN.md §4.2).
  double available_memory_proportion = 0;
  // EvaluatePlan of `assignment` with that proportion: the plan's figures.
  PlanEvaluation evaluation;
  // The strategy's own fields of the plan (proto/plan.proto: `search` when
  // a search ran, `optimal` when the DPs ran, auto's `candidates`), merged
  // into the plan as they are; nothing else is set.
  proto::Plan summary;
  // A compiler's verdict on the split (search judging its candidates, or
  // sharder/compile_judge.h afterwards): whether it accepted it, and its
  // words when it failed without naming a tile.
  std::optional<bool> compiler_fits;
  std::string compiler_message;
  std::vector<std::string> warnings;  // for the plan, in order
  // Other distinct splits worth compiling when this one fails, best first
  // (auto's other candidates, BetterResult).
  std::vector<RunnerUp> runners_up;
  // auto, when it weighed a last stage that returns to IPU 0 for a weight
  // read far apart (Note [Last stage on IPU 0]): the weight (-1: none),
  // and the evaluation of the other plan of the two (revisiting when the
  // chosen one is not; unset when there was none that --weights allows).
  int32_t shared_weight = -1;
  std::optional<PlanEvaluation> other_evaluation;
  // The constraint the split breaks when Evaluated could not repair it
  // (Note [Constraints in every strategy], constraints.h); "" when it keeps
  // them all. Such a split loses to any other (BetterResult) and is never
  // a plan.
  std::string broken_constraint;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  // The --strategy name ("raw", "search", "optimal", "auto").
  virtual absl::string_view name() const = 0;
  // Capabilities the options and the planner ask about, declared by each
  // strategy instead of compared by name.
  // It judges its candidates with StrategyContext::oracle as it searches
  // (else a compile command judges its chosen split afterwards,
  // sharder/compile_judge.h).
  virtual bool accepts_oracle() const { return false; }
  // It reads StrategyContext::optimal_perf (--optimal-perf).
  virtual bool optimal_perf() const { return false; }
  // Splits context.problem over context.num_ipus IPUs. Errors: those of the
  // underlying algorithm (InvalidArgument for a split it cannot make,
  // Internal when time ran out before it started, a compiler's error).
  virtual absl::StatusOr<StrategyResult> Run(
      const StrategyContext& context) const = 0;
};

// Evaluates `assignment` in `context` with available memory proportion
// `proportion` and returns it as a result (the strategies' last step).
StrategyResult Evaluated(const StrategyContext& context, Assignment assignment,
                         double proportion);

// Seconds since `since`.
double SecondsSince(std::chrono::steady_clock::time_point since);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_STRATEGY_H_
