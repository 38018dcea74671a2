#include "writers/write_outputs.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/output_guard.h"
#include "base/status_macros.h"
#include "writers/emit.h"

namespace autoshard {
namespace fs = std::filesystem;
namespace {

// Every file path of `files`, in the order they are checked and written
// (the split folder apart).
std::vector<std::string> FilePaths(const OutputFiles& files) {
  std::vector<std::string> paths;
  if (!files.model.empty()) paths.push_back(files.model);
  if (!files.plan.empty()) paths.push_back(files.plan);
  if (!files.sharding_config.empty()) paths.push_back(files.sharding_config);
  for (const auto& [path, content] : files.extra) paths.push_back(path);
  return paths;
}

// Builds the stage models of `loaded`'s annotated model from the plan's
// placement, for `files.split_dir`.
absl::StatusOr<Split> MakeSplit(const Plan& plan, const OutputFiles& files,
                                LoadedModel& loaded, const std::string& label) {
  absl::StatusOr<Split> split = SplitStreamed(
      &loaded.model, loaded.streamed, [&](const onnx::ModelProto& model) {
        return SplitModel(model, plan.placement, loaded.path.parent_path(),
                          plan.analysis.get());
      });
  if (!split.ok()) {
    return absl::Status(
        split.status().code(),
        absl::StrCat(label, ": split: ", split.status().message()));
  }
  split->manifest.set_model(PathFromFolder(files.model, files.split_dir));
  if (absl::Status s = CheckSplitNames(loaded.external_files,
                                       static_cast<int>(split->stages.size()));
      !s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat(files.split_dir, ": ", s.message()));
  }
  return split;
}

}  // namespace

absl::StatusOr<PreparedOutputs> PrepareOutputs(
    const Plan& plan, OutputFiles files, LoadedModel* loaded,
    const std::vector<fs::path>& inputs, const std::string& label) {
  const std::vector<std::string> outputs = FilePaths(files);
  std::vector<fs::path> input_paths = {loaded->path};
  input_paths.insert(input_paths.end(), inputs.begin(), inputs.end());
  const fs::path source_dir = loaded->path.parent_path();
  std::vector<fs::path> link_sources;
  for (const auto& rel : loaded->external_files) {
    input_paths.push_back(source_dir / rel);
    link_sources.push_back(source_dir / rel);
  }
  PreparedOutputs prepared;
  // Note [Outputs are all or nothing]: the data links SaveModel makes are
  // outputs too.
  if (!files.model.empty()) {
    prepared.links =
        PlannedDataLinks(files.model, source_dir, loaded->external_files);
  }
  RETURN_IF_ERROR(CheckOutputPaths(outputs, input_paths));
  RETURN_IF_ERROR(
      CheckOutputAliases(outputs, input_paths, prepared.links, link_sources));
  if (!files.split_dir.empty() && files.model.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(files.split_dir, ": a split folder needs the model"));
  }
  if (!files.split_dir.empty()) {
    // Nothing written may land in the folder the split replaces.
    std::vector<fs::path> kept = input_paths;
    kept.insert(kept.end(), outputs.begin(), outputs.end());
    RETURN_IF_ERROR(CheckSplitDir(files.split_dir, kept));
  }
  RETURN_IF_ERROR(ApplyPlan(plan, &loaded->model));
  if (!files.split_dir.empty()) {
    // The stage models copy the weights they use from the input file.
    ASSIGN_OR_RETURN(prepared.split, MakeSplit(plan, files, *loaded, label));
  }
  prepared.plan = &plan;
  prepared.files = std::move(files);
  prepared.loaded = loaded;
  return prepared;
}

absl::StatusOr<WrittenOutputs> WritePreparedOutputs(
    const PreparedOutputs& prepared) {
  const OutputFiles& files = prepared.files;
  const LoadedModel& loaded = *prepared.loaded;
  const proto::Plan& plan = prepared.plan->proto;
  WrittenOutputs out;
  out.warnings.assign(plan.warnings().begin(), plan.warnings().end());
  // The written model must pass the ONNX checker unless the input fails it
  // too (e.g. a newer IR version than ONNX 1.12 knows): then it is a warning.
  auto check = [&](const fs::path& written) -> absl::Status {
    absl::Status status = CheckModelFile(written);
    if (status.ok()) return status;
    if (!CheckModelFile(loaded.path).ok()) {
      out.warnings.push_back(absl::StrCat("the input model fails the ",
                                          status.message(),
                                          " (so does the output)"));
      return absl::OkStatus();
    }
    return absl::InternalError(absl::StrCat(
        files.model, ": the annotated model fails the ", status.message()));
  };
  OutputBackup backup;  // Note [Outputs are all or nothing]
  for (const auto& path : FilePaths(files)) RETURN_IF_ERROR(backup.Keep(path));
  for (const auto& link : prepared.links) RETURN_IF_ERROR(backup.Keep(link));
  // On an error, `backup` puts every earlier file back as it goes.
  const fs::path source_dir = loaded.path.parent_path();
  // The split is written and checked in full before the first rename, and
  // moved into place last (Note [A split folder is written as a whole]).
  std::optional<StagedSplit> staged_split;
  std::vector<std::string> split_warnings;
  if (prepared.split) {
    split_warnings = prepared.split->warnings;
    ASSIGN_OR_RETURN(StagedSplit staged,
                     StageSplit(*prepared.split, files.split_dir, source_dir,
                                loaded.path, &split_warnings));
    staged_split.emplace(std::move(staged));
  }
  if (!files.model.empty()) {
    RETURN_IF_ERROR(SaveModel(loaded.model, files.model, source_dir,
                              loaded.external_files,
                              files.check_model ? check : BeforeRename(),
                              loaded.streamed, files.write_progress));
    out.written.push_back(files.model);
  }
  std::vector<std::pair<std::string, std::string>> texts;
  if (!files.plan.empty()) texts.emplace_back(files.plan, PlanJson(plan));
  if (!files.sharding_config.empty()) {
    texts.emplace_back(files.sharding_config, ShardingConfigYaml(plan));
  }
  texts.insert(texts.end(), files.extra.begin(), files.extra.end());
  for (const auto& [path, content] : texts) {
    RETURN_IF_ERROR(WriteFileAtomically(path, content));
    out.written.push_back(path);
  }
  if (staged_split) {
    RETURN_IF_ERROR(staged_split->MoveIntoPlace());
    for (auto& w : split_warnings) out.warnings.push_back("split: " + w);
    out.written.push_back(absl::StrCat(files.split_dir, " (",
                                       prepared.split->stages.size(),
                                       " stage models and manifest.json)"));
  }
  backup.Commit();
  return out;
}

absl::StatusOr<WrittenOutputs> WriteOutputs(const Plan& plan, OutputFiles files,
                                            LoadedModel* loaded,
                                            const std::vector<fs::path>& inputs,
                                            const std::string& label) {
  ASSIGN_OR_RETURN(
      PreparedOutputs prepared,
      PrepareOutputs(plan, std::move(files), loaded, inputs, label));
  return WritePreparedOutputs(prepared);
}

}  // namespace autoshard
