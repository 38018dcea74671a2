// Per-stage sub-models (DESIGN.md §5): one ONNX model per pipeline stage of
// an annotated model, and a manifest that chains them back to the original.
//
// Note [Splitting an annotated model]
// The input is a model whose main-graph nodes carry the INT attributes
// `__ipu_number` and `__pipeline_stage` (written by `shard`/`apply`, or by
// hand). Stages are numbered from 0 without gaps; every node of a stage has
// one IPU; no edge (implicit inputs of If/Loop/Scan bodies included) goes
// to an earlier stage. Stage s holds:
// - nodes: its nodes, in topological order, without the two attributes (a
//   stage runs on its own), plus a copy of every constant node (Note
//   [Constants and weights] in costmodel/cost_model.cc: Constant, or a
//   constant-foldable chain such as ConstantOfShape of a constant shape)
//   whose output it reads. A constant node placed on a stage that neither
//   reads it nor outputs it is left out there (no dangling nodes), unless
//   that would empty the stage (Note [A stage of constants]);
// - weights: every initializer its nodes (and their bodies) read; a weight
//   read on two stages is in both;
// - inputs: the graph inputs it reads, then the cut tensors it reads (outputs
//   of non-constant nodes of earlier stages), in topological order of their
//   producers;
// - outputs: the graph outputs it produces, in the model's order, then the
//   cut tensors later stages read; a graph output that later stages read
//   flattened (below) is output as itself and as the two tensors they read;
// - value_info: the model's entries for the tensors it computes; opset
//   imports, IR version, functions, producer and metadata as the model's.
// A control-flow node is one node: its bodies are never cut, and the names
// they read from the outer scope are inputs like any other. Types of cut
// tensors come from graph/tensor_types.h (ONNX's inference, then rules); a
// cut tensor whose rank shows only at run time (no model input could declare
// it) travels as "<t>__autoshard_data" (flattened to 1-D) and
// "<t>__autoshard_shape", and the reading stage reshapes them back into t.
// A graph output that is a graph input is sourced as "graph_input"; one that
// is an initializer comes out of stage 0.
//
// Note [A stage of constants]
// A plan may put only constant nodes on a stage (the raw strategy does, e.g.
// oww_melspectrogram on 8 IPUs): copied into their readers, they would leave
// it without nodes, inputs or outputs, which the ONNX checker accepts and
// onnxruntime does not load. Such a stage keeps its constant nodes instead
// (they are "pinned"): later stages that read them read them from it as cut
// tensors, so it is a runnable model with outputs and the pipeline runs as
// planned; earlier stages that read them (only a hand annotation puts a
// constant after its reader) still hold copies. A stage whose results no
// later stage reads and that produces no graph output (a pinned stage read
// only by earlier ones, or dead nodes) outputs what its own nodes compute
// and no node of it reads, with no reader in the manifest: onnxruntime runs
// no model without outputs.
#ifndef AUTOSHARD_WRITERS_SPLIT_SPLIT_H_
#define AUTOSHARD_WRITERS_SPLIT_SPLIT_H_

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/model_io_stream.h"
#include "graph/placement.h"
#include "onnx/onnx_pb.h"
#include "proto/split.pb.h"

namespace autoshard {

struct ModelAnalysis;  // costmodel/model_analysis.h

struct SplitStageModel {
  onnx::ModelProto model;  // what DIR/<manifest file> holds
  // External-data files the model refers to (relative, sorted, unique).
  std::vector<std::string> external_files;
  // Its weights still in the input file (SplitStreamed; Note [Weights stay
  // in the file]): StageSplit copies them from there.
  StreamedWeights streamed;
};

struct Split {
  // Stage s is stages[s] and manifest.stages(s).
  std::vector<SplitStageModel> stages;
  proto::SplitManifest manifest;  // model path left empty; the caller sets it
  std::vector<std::string> warnings;
};

// Splits `annotated` (Note [Splitting an annotated model]). `model_dir` is
// the model's folder, for its external data (may be empty for a model
// without). Errors (InvalidArgument, naming the node and the reason): no
// node annotated; a node without either attribute, or with one that is not a
// non-negative INT; a stage without nodes (gaps); two IPUs on one stage; an
// edge to an earlier stage; a name no node, input or initializer provides;
// a cut tensor whose element type or rank neither ONNX nor autoshard's rules
// can tell.
absl::StatusOr<Split> SplitModel(const onnx::ModelProto& annotated,
                                 const std::filesystem::path& model_dir);

// The same for `model` placed by `placement` (a plan's, passed as it is: the
// model's annotations, if any, are not read). `analysis`, when not null, is
// planning's analysis of this model (Plan::analysis): its DAG, constant mask
// and interface types are used instead of being computed again. Errors as
// above, InvalidArgument when the placement is not for the model's node
// count, and FailedPrecondition when the analysis's nodes are not the
// model's.
absl::StatusOr<Split> SplitModel(const onnx::ModelProto& model,
                                 const Placement& placement,
                                 const std::filesystem::path& model_dir,
                                 const ModelAnalysis* analysis = nullptr);

// Runs `split_model` (one of the SplitModel calls above) on `model`, read
// by LoadModel with its weights left in the file (`streamed`), and gives
// each stage the weights it copies from the file, so that no weight's bytes
// are read into memory. The streamed tensors read as inline tensors without
// data while `split_model` runs (their marks are put back before this
// returns). With `streamed` empty it is `split_model(*model)`.
absl::StatusOr<Split> SplitStreamed(
    onnx::ModelProto* model, const StreamedWeights& streamed,
    absl::FunctionRef<absl::StatusOr<Split>(const onnx::ModelProto&)>
        split_model);

// The stage files' names: "stage_<s>.onnx".
std::string StageFileName(int stage);

// Checks, before anything is written, that `dir` can receive a split: its
// parent folder exists and is writable; `dir` does not exist, or is an empty
// folder, or holds an earlier split (a manifest.json of format
// "autoshard-split" and nothing it does not list); no path of `inputs` (the
// run's inputs and other outputs) is `dir` or inside it. InvalidArgument or
// PermissionDenied naming `dir`.
absl::Status CheckSplitDir(const std::filesystem::path& dir,
                           const std::vector<std::filesystem::path>& inputs);

// A split written in full into a new folder beside its destination, every
// stage checked (Note [A split folder is written as a whole]): nothing at
// the destination has changed yet. MoveIntoPlace puts it there; a staged
// split destroyed before that is removed.
class StagedSplit {
 public:
  StagedSplit(std::filesystem::path tmp, std::filesystem::path dir)
      : tmp_(std::move(tmp)), dir_(std::move(dir)) {}
  StagedSplit(StagedSplit&& other) noexcept;
  StagedSplit& operator=(StagedSplit&&) = delete;
  StagedSplit(const StagedSplit&) = delete;
  ~StagedSplit();
  // The new folder takes the destination's place in one rename (an earlier
  // split there is swapped out and removed). Errors (InvalidArgument naming
  // the destination) leave the destination as it was. Call it once, after
  // every other output of the run is written: it is the one step after
  // which an earlier split cannot be put back.
  absl::Status MoveIntoPlace();

 private:
  std::filesystem::path tmp_;  // empty once moved
  std::filesystem::path dir_;
};

// Writes `split` into a StagedSplit for `dir`: each stage through SaveModel
// (external data cloned or hard-linked from `source_dir`, ShareFile; never
// copied), every stage checked, manifest.json last. `dir` is checked first
// (CheckSplitDir) and not touched. Each stage must pass the ONNX checker and
// ONNX's strict shape inference, unless `model_path` fails the same check (then
// `warnings` says so): else InternalError naming the stage file. On any
// error nothing is left behind.
absl::StatusOr<StagedSplit> StageSplit(const Split& split,
                                       const std::filesystem::path& dir,
                                       const std::filesystem::path& source_dir,
                                       const std::filesystem::path& model_path,
                                       std::vector<std::string>* warnings);

// StageSplit, then MoveIntoPlace: on any error `dir` is as it was.
absl::Status WriteSplit(const Split& split, const std::filesystem::path& dir,
                        const std::filesystem::path& source_dir,
                        const std::filesystem::path& model_path,
                        std::vector<std::string>* warnings);

}  // namespace autoshard

#endif  // AUTOSHARD_WRITERS_SPLIT_SPLIT_H_
