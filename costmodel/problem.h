// ShardingProblem: what the strategies see of a model — plain vectors, no
// ONNX types (this header includes none) — so they can be tested on
// hand-written problems. A model's is built by MakeProblem
// (costmodel/cost_model.h).
#ifndef AUTOSHARD_COSTMODEL_PROBLEM_H_
#define AUTOSHARD_COSTMODEL_PROBLEM_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace autoshard {

struct ShardingProblem {
  // Node i's distinct producers and consumers (edges through tensors and
  // outer-scope reads). Ids are dense 0..n-1.
  std::vector<std::vector<int32_t>> producers;
  std::vector<std::vector<int32_t>> consumers;
  std::vector<int32_t> topo_order;  // every node once, after its producers
  std::vector<double> flops;        // per node, 2 per MAC
  std::vector<int64_t> activation_bytes;           // per node: its outputs
  std::vector<int32_t> num_activation_inputs;      // per node, see ModelCosts
  std::vector<int64_t> weight_size_bytes;          // per weight id
  std::vector<std::vector<int32_t>> node_weights;  // node -> weight ids read
  std::vector<std::string> names;                  // per node, for messages
  // Per weight: 1 when it is floating point (Weight::floating), the weights
  // --weights variable keeps on one IPU; empty: every weight (hand-written
  // problems).
  std::vector<uint8_t> weight_is_float;
  // For the tile-memory and performance models (see NodeCost):
  std::vector<std::string> op_class;          // per node
  std::vector<int64_t> temporary_bytes;       // per node, before the cap
  std::vector<int64_t> largest_output_bytes;  // per node
  std::vector<uint8_t> is_constant;           // per node: folded, costs nothing
  std::vector<uint8_t> is_graph_output;  // per node: produces a graph output
  std::vector<int32_t> topo_position;    // node -> index in topo_order
  // Tensors (a node's output slots): what cut tensors and liveness are
  // counted in, so a multi-output node sends only what others read.
  std::vector<std::vector<int64_t>> output_bytes;  // node -> slot -> bytes
  // node -> slot -> distinct consumer nodes of that tensor
  std::vector<std::vector<std::vector<int32_t>>> output_consumers;
  std::vector<std::vector<uint8_t>> output_is_graph_output;  // node -> slot
  // node -> the (producer, slot) tensors it reads, distinct
  std::vector<std::vector<std::pair<int32_t, int32_t>>> input_tensors;

  // Problem files (sharder/problem_file.h) may give a node's seconds and
  // code bytes directly: when not empty, per node, replacing what the device
  // profile derives from flops and op_class (0 included; a negative value
  // keeps the derived one).
  std::vector<double> node_time_s;
  std::vector<int64_t> code_bytes;
  // Cut tensors are staged through host memory (sent once by the producer's
  // IPU, received once by each other IPU that reads them) instead of
  // PopART's adjacent-stage copies. See ComputeCutBytes.
  bool copies_through_host = false;
  // Remote weights (issue 30; costmodel/weight_location.h). Per weight,
  // empty when every weight is on-chip. weight_size_bytes is then what
  // stays resident on the IPU (0 for a remote weight, 1/n for an on-chip
  // weight sharded over n replicas); weight_loaded_bytes the full tensor,
  // live on the IPU only from the first to the last of its readers there
  // (loaded, and all-gathered when sharded; 0: resident weights), and
  // weight_load_s the seconds one stage takes to load it each step.
  std::vector<int64_t> weight_loaded_bytes;
  std::vector<double> weight_load_s;

  // Constraints (issue 31; solver/strategies/constraints.h checks and
  // repairs splits against them). Per node, the IPUs it may run on as a bit
  // mask of IPUs 0..63, kAnyIpu when unconstrained; empty: no node is.
  std::vector<uint64_t> allowed_ipus;
  // Per node, its colocation group (all of a group's nodes on one IPU), -1
  // for none; empty: no groups. colocate_names: per group, for messages.
  std::vector<int32_t> colocate_group;
  std::vector<std::string> colocate_names;
  // Host devices (issue 31; problem files' num_host_devices, Tarnawski et
  // al.'s CPUs): how many, and per node its seconds on one (negative: it
  // cannot run there; empty: no node can) and whether only the host can run
  // it (empty: none). Only the host-aware ideal DP (IdealDpHostSplit in
  // solver/strategies/ideal_dp.h) places nodes there; the other strategies
  // plan the IPUs only.
  int num_host_devices = 0;
  std::vector<double> host_time_s;
  std::vector<uint8_t> host_only;
  bool HasHost() const { return num_host_devices > 0 && !host_time_s.empty(); }
  static constexpr uint64_t kAnyIpu = ~uint64_t{0};
  bool HasConstraints() const {
    return !allowed_ipus.empty() || !colocate_group.empty();
  }
  // Whether node `n` may run on IPU `ipu` (>= 0).
  bool IpuAllowed(int32_t n, int ipu) const {
    if (allowed_ipus.empty() || allowed_ipus[n] == kAnyIpu) return true;
    return ipu < 64 && ((allowed_ipus[n] >> ipu) & 1) != 0;
  }

  int num_nodes() const { return static_cast<int>(topo_order.size()); }
  // Sum of the sizes of the distinct weights node `n` reads (PopRT's
  // per-node bytes cost).
  int64_t NodeWeightBytes(int32_t n) const;
};

// Bytes of cut tensors per IPU when node i runs on ipu_of_node[i] (IPUs
// 0..num_ipus-1), as PopART's pipeline transform copies them: only between
// adjacent stages ("contiguate IpuCopies", popart/transforms/pipeline.cpp), so
// a tensor produced on IPU d and last read on IPU e > d is sent by every IPU
// d..e-1 and received by every IPU d+1..e, once each however many IPUs read
// it. Hence the bytes crossing a boundary between two IPUs depend only on
// which nodes lie on either side. A reader on an IPU before d (a plan that is
// not monotone) gets its own copy from d. With copies_through_host, a tensor
// is sent once by d and received once by each other IPU that reads it.
struct CutBytes {
  std::vector<int64_t> in_bytes, out_bytes;  // per IPU
};
CutBytes ComputeCutBytes(const ShardingProblem& problem,
                         const std::vector<int32_t>& ipu_of_node, int num_ipus);

// The same per pipeline stage when stages may outnumber IPUs (a last stage
// that returns to IPU 0, Note [A stage revisits an IPU],
// costmodel/plan_evaluation.h): stage s runs on ipu_of_stage[s]. A tensor of
// stage s is copied stage by stage to the last later stage that reads it on
// another IPU (readers on the producer's own IPU need no copy: PopART keeps
// the tensor there); with copies_through_host, sent once and received once
// by each reader stage on another IPU. When every stage s runs on IPU s, the
// result equals ComputeCutBytes's. Cost: O(nodes + readers + bytes copied
// x stages crossed).
CutBytes ComputeStageCutBytes(const ShardingProblem& problem,
                              const std::vector<int32_t>& stage_of_node,
                              const std::vector<int32_t>& ipu_of_stage);

// Fills topo_position from topo_order, and the per-node vectors a
// hand-written problem may leave empty (op_class "other", zeros, not
// constant; one output tensor per node, of activation_bytes, read by all its
// consumers).
void FillProblemDefaults(ShardingProblem* problem);

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_PROBLEM_H_
