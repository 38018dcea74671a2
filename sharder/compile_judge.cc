#include "sharder/compile_judge.h"

#include <chrono>
#include <filesystem>
#include <utility>

#include "graph/model_io.h"
#include "graph/status_macros.h"
#include "sharder/outputs/write_outputs.h"

namespace autoshard::internal {
namespace fs = std::filesystem;

CandidateWriter WriteCandidateOf(const onnx::ModelProto& model,
                                 std::vector<std::string> node_names) {
  return [&model, names = std::move(node_names)](
             const std::vector<int32_t>& ipu_of_node, const fs::path& path,
             const std::vector<fs::path>& inputs) -> absl::Status {
    Plan plan;
    plan.node_names = names;
    plan.ipu.assign(ipu_of_node.begin(), ipu_of_node.end());
    plan.pipeline_stage = plan.ipu;
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
  return std::make_unique<CompileOracle>(
      options.compile_cmd, WriteCandidateOf(model, p.problem.names),
      options.model_dir, options.external_files, options.jobs,
      options.compile_timeout_s,
      std::chrono::steady_clock::now() +
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
              std::chrono::duration<double>(options.max_search_s)));
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

}  // namespace autoshard::internal
