#include "sharder/compile_judge.h"

#include <chrono>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/deadline.h"
#include "base/status_macros.h"
#include "graph/model_io.h"
#include "solver/strategies/registry.h"
#include "writers/write_outputs.h"

namespace autoshard::internal {
namespace fs = std::filesystem;

CandidateWriter WriteCandidateOf(const onnx::ModelProto& model,
                                 std::vector<std::string> node_names,
                                 const ShardingProblem* problem) {
  return [&model, problem, names = std::move(node_names)](
             const std::vector<int32_t>& ipu_of_node, const fs::path& path,
             const std::vector<fs::path>& inputs) -> absl::Status {
    Plan plan;
    plan.node_names = names;
    plan.placement.ipu.assign(ipu_of_node.begin(), ipu_of_node.end());
    plan.placement.pipeline_stage =
        problem != nullptr ? StagesOfIpus(*problem, plan.placement.ipu)
                           : plan.placement.ipu;
    LoadedModel candidate;
    candidate.model = model;
    // The candidate's source is the model in memory: no file of its own (a
    // name in the candidate's folder, so nothing is linked), no external
    // files (their links are among `inputs`).
    candidate.path = path.parent_path() / ".autoshard_planned_model";
    OutputFiles files;
    files.model = path.string();
    files.check_model = false;  // why: OutputFiles::check_model
    return WriteOutputs(plan, std::move(files), &candidate, inputs,
                        path.string())
        .status();
  };
}

absl::StatusOr<std::unique_ptr<CompileOracle>> MakeCompiler(
    const onnx::ModelProto& model, const Prepared& p, const Options& options) {
  if (options.compile_cmd.empty()) return nullptr;
  // The search's compiles share its deadline; the others' run after
  // planning, each within the compile timeout only.
  const Strategy* strategy = FindStrategy(options.strategy);
  const auto deadline = strategy == nullptr || !strategy->accepts_oracle()
                            ? std::chrono::steady_clock::time_point::max()
                            : SecondsAfter(std::chrono::steady_clock::now(),
                                           options.max_search_s);
  return std::make_unique<CompileOracle>(
      options.compile_cmd,
      WriteCandidateOf(model, p.analysis->problem.names, &p.analysis->problem),
      options.model_dir, options.external_files, options.jobs,
      options.compile_timeout_s, deadline);
}

SearchOracle OracleOf(const CompileOracle* compiler) {
  if (compiler == nullptr) return nullptr;
  return [compiler](const std::vector<std::vector<int32_t>>& candidates,
                    double amp) -> absl::StatusOr<std::vector<OracleVerdict>> {
    ASSIGN_OR_RETURN(std::vector<CompileVerdict> verdicts,
                     compiler->Compile(candidates, amp));
    std::vector<OracleVerdict> out;
    for (const CompileVerdict& v : verdicts) {
      out.push_back({v.fits, v.tile, v.bytes, v.unparsable});
    }
    return out;
  };
}

namespace {

// "auto's 'ideal' split: Out of memory on tile 5 (700000 bytes)".
std::string Refusal(const std::string& name, const OracleVerdict& v) {
  if (!v.message.empty()) return absl::StrCat(name, ": ", v.message);
  if (v.tile >= 0) {
    return absl::StrCat(name, ": out of memory on tile ", v.tile, " (", v.bytes,
                        " bytes)");
  }
  return absl::StrCat(name, ": refused");
}

}  // namespace

absl::StatusOr<StrategyResult> CompileInOrder(const StrategyContext& c,
                                              StrategyResult r,
                                              const SearchOracle& oracle,
                                              const std::string& strategy) {
  std::string first_name = strategy;  // auto: its chosen candidate's
  for (const proto::StrategyResult& k : r.summary.candidates())
    if (k.chosen()) first_name = k.strategy();
  std::vector<RunnerUp> order = {
      {first_name, r.assignment, r.available_memory_proportion}};
  for (RunnerUp& u : r.runners_up) order.push_back(std::move(u));
  r.runners_up.clear();
  std::vector<std::string> refused;
  for (size_t i = 0; i < order.size(); ++i) {
    ASSIGN_OR_RETURN(std::vector<OracleVerdict> verdicts,
                     oracle({order[i].assignment.ipu},
                            order[i].available_memory_proportion));
    const OracleVerdict v = verdicts.empty() ? OracleVerdict{} : verdicts[0];
    if (!v.fits) {
      refused.push_back(Refusal(order[i].strategy, v));
      continue;
    }
    if (i > 0) {
      StrategyResult accepted = Evaluated(c, std::move(order[i].assignment),
                                          order[i].available_memory_proportion);
      accepted.summary = std::move(r.summary);
      accepted.warnings = std::move(r.warnings);
      for (proto::StrategyResult& k : *accepted.summary.mutable_candidates())
        k.set_chosen(k.strategy() == order[i].strategy);
      r = std::move(accepted);
    }
    r.compiler_fits = true;
    if (!refused.empty()) {
      r.warnings.push_back(absl::StrCat(
          "the compile command refused ", refused.size(), " split",
          refused.size() == 1 ? "" : "s", " before accepting ",
          order[i].strategy, "'s: ", absl::StrJoin(refused, "; ")));
    }
    return r;
  }
  r.compiler_fits = false;
  r.compiler_message = absl::StrCat(
      order.size() == 1
          ? std::string("it refused the split")
          : absl::StrCat("it refused all ", order.size(), " candidate splits"),
      " (", absl::StrJoin(refused, "; "), ")");
  return r;
}

}  // namespace autoshard::internal
