// Internal to sharder/: the compile oracle (sharder/oracle/) wired to
// planning. The oracle sits below the writers and is handed its candidate
// writer from here, so each candidate model is annotated and written by the
// same library step as the real output (writers/write_outputs.h), and
// the search sees the compiler through its plain SearchOracle callback.
#ifndef AUTOSHARD_SHARDER_COMPILE_JUDGE_H_
#define AUTOSHARD_SHARDER_COMPILE_JUDGE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "sharder/options.h"
#include "sharder/oracle/compile_oracle.h"
#include "sharder/prepare.h"
#include "solver/strategies/search_strategy.h"
#include "solver/strategies/strategy.h"

namespace autoshard::internal {

// Writes the candidates of `model` (as given to planning; it must outlive the
// writer) under planning's node names `node_names` (Prepared::problem.names,
// one per main-graph node): each is a plan (IPU = pipeline stage, or with
// `problem` (planning's, outliving the writer) the stages StagesOfIpus
// gives, so a last stage back on IPU 0 is stage k) that ApplyPlan puts on a
// copy of the model, and WriteOutputs writes (its path
// checked against the links beside it, a temporary name renamed; not the
// ONNX checker, see OutputFiles::check_model). No node is named again. The
// links beside the candidate are inputs: the writer gets no external files to
// link (the oracle made them).
CandidateWriter WriteCandidateOf(const onnx::ModelProto& model,
                                 std::vector<std::string> node_names,
                                 const ShardingProblem* problem = nullptr);

// The compiler that judges the search's candidates (options.compile_cmd,
// jobs, compile_timeout_s; with search, its deadline from max_search_s),
// writing `model` under p's names; null without a command.
absl::StatusOr<std::unique_ptr<CompileOracle>> MakeCompiler(
    const onnx::ModelProto& model, const Prepared& p, const Options& options);

// `compiler` as the search's oracle; null for a null compiler.
SearchOracle OracleOf(const CompileOracle* compiler);

// --compile-cmd with a strategy that plans without a compiler (auto,
// optimal, raw): `oracle` compiles r's split, then r.runners_up in order,
// one at a time, until it accepts one (`strategy` names r's split in
// messages, or auto's chosen candidate). The result is the accepted split
// (evaluated in `c`; auto's candidate list marks it chosen), else r; its
// compiler_fits and compiler_message say what the compiler said, and a
// warning lists the splits it refused. Errors: the compile command's.
absl::StatusOr<StrategyResult> CompileInOrder(const StrategyContext& c,
                                              StrategyResult r,
                                              const SearchOracle& oracle,
                                              const std::string& strategy);

}  // namespace autoshard::internal

#endif  // AUTOSHARD_SHARDER_COMPILE_JUDGE_H_
