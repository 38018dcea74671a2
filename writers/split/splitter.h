// Internal to writers/split/: the class that builds a split (Note
// [Splitting an annotated model] in split.h). split.cc places the nodes on
// stages and checks the placement; split_stage.cc builds each stage's model
// (inputs, nodes, outputs, records) and the manifest.
#ifndef AUTOSHARD_WRITERS_SPLIT_SPLITTER_H_
#define AUTOSHARD_WRITERS_SPLIT_SPLITTER_H_

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/placement.h"
#include "graph/tensor_types.h"
#include "onnx/onnx_pb.h"
#include "proto/split.pb.h"
#include "writers/split/split.h"

namespace autoshard::split_internal {

// What BuildStage's steps share about the stage being built.
struct StageParts {
  int s;                                           // the stage
  onnx::GraphProto* g;                             // its graph
  proto::SplitStage* entry;                        // its manifest entry
  absl::flat_hash_set<std::string> produced = {};  // what its nodes output
  std::set<std::string> weights = {};              // initializers it holds
};

class Splitter {
 public:
  // `placement`, when not null, says where each node runs (else the
  // model's annotations do). `dag` is the DAG of `model`'s graph, or of a
  // copy with the same nodes (planning's: node protos are read from
  // `model`). `types`, when not null, are the interface types (else they
  // are inferred here). `constant_mask`, when not null, is the model's
  // constant nodes (ModelAnalysis::problem.is_constant; else found here).
  Splitter(const onnx::ModelProto& model, const Graph& dag,
           const Placement* placement, const InterfaceTypes* types,
           const std::vector<uint8_t>* constant_mask)
      : model_(model),
        g_(model.graph()),
        dag_(dag),
        placement_(placement),
        given_constant_mask_(constant_mask),
        given_types_(types) {}

  absl::StatusOr<Split> Run(const std::filesystem::path& model_dir);

 private:
  // Placement (split.cc).
  absl::Status TakePlacement();
  absl::Status ReadPlacements();
  absl::Status Validate();
  // A node's explicit inputs and the names its bodies read, distinct.
  std::vector<std::string> Reads(NodeId id) const;
  // Non-constant nodes go to their stage. A constant node goes to every
  // stage holding a node that reads it, and to its own stage when it
  // produces a graph output or nothing reads it. A stage that would hold
  // none of its own nodes that way, only constants (Note [A stage of
  // constants]), keeps them: they are pinned, copied only into earlier
  // stages that read them; later ones read them from it.
  void AssignNodesToStages();

  // The stages (split_stage.cc).
  // How cut tensor `t` crosses between stages (both sides agree): as itself
  // with a complete type, or, when only its element type is known (its rank
  // shows only at run time, e.g. an If whose branches differ in rank), as
  // its data flattened to 1-D plus its shape, both of known rank.
  struct CutType {
    onnx::TypeProto type;  // complete, or the element type alone
    bool reshaped = false;
    std::string data, shape;  // the two tensors sent when reshaped
  };
  absl::StatusOr<CutType> CutTypeFor(const std::string& t);
  // `base`, or `base_<k>` with the smallest k >= 1 no main-graph name has.
  std::string FreshName(const std::string& base);
  // Memoized: one CutType per tensor, so both stages use the same names.
  absl::StatusOr<const CutType*> Cut(const std::string& t);
  static onnx::TypeProto Rank1(int32_t elem);
  void CopyModelFields(int s, onnx::ModelProto* out) const;
  int64_t DefaultOpset() const;
  // Reshape(data, shape) -> out, keeping zero dims where the opset can.
  onnx::NodeProto ReshapeNode(const std::string& name, const std::string& data,
                              const std::string& shape,
                              const std::string& out) const;
  absl::Status BuildStage(int s, onnx::ModelProto* out,
                          proto::SplitStage* entry);
  // BuildStage, step 1: the graph inputs and the cut tensors the stage
  // reads (flattened ones reshaped back); the weights it reads.
  absl::Status AddStageInputs(StageParts* parts);
  // Step 2: its nodes, without the placement attributes.
  void AddStageNodes(const StageParts& parts);
  // Step 3: the names it outputs, in order.
  std::vector<std::string> StageOutputs(StageParts* parts);
  // Step 4: those outputs (flattened ones as data and shape).
  absl::Status AddStageOutputs(const std::vector<std::string>& outputs,
                               StageParts* parts);
  // Step 5: its weights, and the model's records (value_info,
  // quantization) for what it computes.
  void AddStageRecords(const StageParts& parts);
  void FillManifest(const std::set<std::string>& data_files,
                    proto::SplitManifest* m) const;

  const onnx::ModelProto& model_;
  const onnx::GraphProto& g_;
  const Graph& dag_;
  const Placement* placement_;
  std::vector<int> ipu_, stage_;  // per node, as placed
  int num_stages_ = 0;
  std::vector<int> stage_ipu_;
  const std::vector<uint8_t>* given_constant_mask_;
  std::vector<uint8_t> found_constant_mask_;  // when none is given
  const std::vector<uint8_t>* is_constant_ = nullptr;
  std::vector<uint8_t> pinned_;  // per node: a constant kept on its stage
  std::vector<std::vector<int>> node_stages_;     // per node, ascending
  std::vector<std::vector<NodeId>> stage_nodes_;  // per stage, topological
  const InterfaceTypes* given_types_;
  TypeMap inferred_types_;  // when none are given
  const TypeMap* types_ = nullptr;
  absl::flat_hash_map<std::string, const onnx::TensorProto*> initializers_;
  absl::flat_hash_map<std::string, const onnx::SparseTensorProto*>
      sparse_initializers_;
  absl::flat_hash_map<std::string, int> input_index_;
  absl::flat_hash_set<std::string> graph_outputs_;
  absl::flat_hash_map<std::string, std::set<int>> readers_;
  absl::flat_hash_map<std::string, CutType> cut_types_;
  absl::flat_hash_set<std::string> names_;  // FreshName's, once used
  std::vector<std::string>* warnings_ = nullptr;
};

}  // namespace autoshard::split_internal

#endif  // AUTOSHARD_WRITERS_SPLIT_SPLITTER_H_
