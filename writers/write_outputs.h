// A plan's files as one library step (DESIGN.md §5): the annotated model,
// the plan JSON, the PopRT sharding config, the per-stage models and any
// further text files the caller rendered (the CLI's pictures), all or
// nothing, printing nothing. The CLI's shard, apply and batch runs call it;
// a library caller gets the same checked, atomic outputs.
//
// Two phases, so that a caller can hold a lock and defer signals over the
// writing only: PrepareOutputs checks every path and computes what is
// written (the annotations, the stage models, from the plan's placement);
// WritePreparedOutputs writes each file to a temporary name and renames it,
// and on the first error puts every earlier file back as it was (Note
// [Outputs are all or nothing] in base/output_guard.h).
#ifndef AUTOSHARD_WRITERS_WRITE_OUTPUTS_H_
#define AUTOSHARD_WRITERS_WRITE_OUTPUTS_H_

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/model_io.h"
#include "sharder/autoshard.h"
#include "writers/split/split.h"

namespace autoshard {

// Where to write; an empty path: not asked for (a split folder needs the
// model: its manifest names it).
struct OutputFiles {
  std::string model;            // the annotated model
  std::string plan;             // the plan JSON (PlanJson)
  std::string sharding_config;  // PopRT's YAML (ShardingConfigYaml)
  std::string split_dir;        // one model per stage and manifest.json
  // Further text files, as (path, content), written after the sharding
  // config and checked like the others; the content may be filled in
  // between PrepareOutputs and WritePreparedOutputs.
  std::vector<std::pair<std::string, std::string>> extra;
  // Run the ONNX checker on the written model (WritePreparedOutputs). The
  // compile oracle's candidates skip it: a candidate is the model as given
  // plus the "__" placement attributes, which ONNX 1.12's checker lets pass
  // unchecked (it refuses an unknown "foo" on a Relu, not "__ipu_number"),
  // so its verdict is the real output's; it cost 0.3-0.7 s per candidate of
  // seg_isnet_quant_uint8.onnx (44 MB).
  bool check_model = true;
  // Sees (bytes written, bytes in all) as the annotated model is written.
  WriteProgress write_progress;
};

// Everything checked and computed, nothing written yet.
struct PreparedOutputs {
  const Plan* plan = nullptr;  // must outlive the PreparedOutputs
  OutputFiles files;
  LoadedModel* loaded = nullptr;  // annotated in place by PrepareOutputs
  std::optional<Split> split;     // when files.split_dir is set
  // The hard links SaveModel makes for external data (outputs too).
  std::vector<std::filesystem::path> links;
};

// What was written, in order (the split as "DIR (N stage models and
// manifest.json)"), and the warnings to show: the plan's, then the writers'.
struct WrittenOutputs {
  std::vector<std::string> written;
  std::vector<std::string> warnings;
};

// Checks the paths of `files` (CheckOutputPaths and CheckOutputAliases of
// base/output_guard.h: distinct; none is the model, its external data or
// one of `inputs`; each folder exists and is writable; the split folder may
// receive a split and holds no other output), annotates `loaded`'s model
// with `plan` (ApplyPlan) and builds the stage models from the plan's
// placement. `label` (the model as the user named it) starts the split's
// errors. Errors: InvalidArgument or PermissionDenied naming the path;
// FailedPrecondition when `plan` is not for this model; the split's errors.
absl::StatusOr<PreparedOutputs> PrepareOutputs(
    const Plan& plan, OutputFiles files, LoadedModel* loaded,
    const std::vector<std::filesystem::path>& inputs, const std::string& label);

// Writes `prepared`: all its files or none (on the first error every file
// is put back as it was, and that error is returned). The split is staged
// (StageSplit: every stage written and checked) before the first rename and
// moved into place last, so a failing stage replaces nothing. With
// files.check_model, the written model must pass the ONNX checker unless the
// input model fails it too (then a warning); else InternalError naming the
// output.
absl::StatusOr<WrittenOutputs> WritePreparedOutputs(
    const PreparedOutputs& prepared);

// PrepareOutputs, then WritePreparedOutputs.
absl::StatusOr<WrittenOutputs> WriteOutputs(
    const Plan& plan, OutputFiles files, LoadedModel* loaded,
    const std::vector<std::filesystem::path>& inputs, const std::string& label);

}  // namespace autoshard

#endif  // AUTOSHARD_WRITERS_WRITE_OUTPUTS_H_
