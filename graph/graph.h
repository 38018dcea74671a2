// The node DAG of a model's main graph, with dense node ids.
//
// Note [Graph ownership and invariants]
// A Graph refers to the NodeProtos of one onnx::GraphProto by index and does
// not own them: the GraphProto must outlive the Graph and must not gain or lose
// nodes while the Graph is in use. NodeId i is the i-th node of the file.
// Edges are producer -> consumer through a tensor, including the names that an
// If/Loop/Scan body reads from the outer scope (implicit inputs). Each pair of
// nodes has at most one edge. `topological_order()` is computed (Kahn's
// algorithm, ties broken by file order), never assumed from file order.
// Building is O(nodes + edges + names).
#ifndef AUTOSHARD_GRAPH_GRAPH_H_
#define AUTOSHARD_GRAPH_GRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

using NodeId = int32_t;
inline constexpr NodeId kNoNode = -1;

class Graph {
 public:
  // Builds the DAG of `graph`'s nodes. Errors: InvalidArgument when a tensor
  // is produced twice (naming both nodes) or when the nodes form a cycle
  // (naming a node on it).
  static absl::StatusOr<Graph> Build(const onnx::GraphProto& graph);

  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const onnx::NodeProto& node(NodeId id) const { return *nodes_[id]; }
  const std::string& name(NodeId id) const { return nodes_[id]->name(); }

  // Distinct producer / consumer nodes of `id`, in increasing id order.
  absl::Span<const NodeId> producers(NodeId id) const;
  absl::Span<const NodeId> consumers(NodeId id) const;

  // Every node once, each after all its producers.
  absl::Span<const NodeId> topological_order() const { return topo_order_; }
  // Position of `id` in topological_order().
  int32_t topo_position(NodeId id) const { return topo_position_[id]; }

  // Names read from the outer scope by `id`'s If/Loop/Scan bodies (sorted);
  // empty for nodes without bodies.
  const std::vector<std::string>& implicit_inputs(NodeId id) const {
    return implicit_inputs_[id];
  }

  // The node producing `tensor`, or kNoNode for graph inputs, initializers
  // and unknown names.
  NodeId producer_of(const std::string& tensor) const;
  // True for names of the graph's initializers.
  bool is_initializer(const std::string& tensor) const {
    return initializers_.contains(tensor);
  }
  // NodeId of the node named `name`, or kNoNode.
  NodeId FindNode(const std::string& name) const;
  // True when `tensor` is an output of the graph.
  bool is_graph_output(const std::string& tensor) const {
    return graph_output_names_.contains(tensor);
  }
  // True when one of `id`'s outputs is an output of the graph.
  bool produces_graph_output(NodeId id) const { return graph_output_[id] != 0; }

 private:
  std::vector<const onnx::NodeProto*> nodes_;
  std::vector<int32_t> producer_offsets_, consumer_offsets_;  // CSR, size n+1
  std::vector<NodeId> producer_ids_, consumer_ids_;
  std::vector<NodeId> topo_order_;
  std::vector<int32_t> topo_position_;
  std::vector<std::vector<std::string>> implicit_inputs_;
  std::vector<uint8_t> graph_output_;
  absl::flat_hash_set<std::string> graph_output_names_;
  absl::flat_hash_map<std::string, NodeId> producer_by_tensor_;
  absl::flat_hash_map<std::string, NodeId> node_by_name_;
  absl::flat_hash_set<std::string> initializers_;
};

// All names a node's bodies read that none of the bodies define (the node's
// implicit inputs), sorted and unique. Descends into nested bodies.
std::vector<std::string> CollectImplicitInputs(const onnx::NodeProto& node);

// True when `node` has a graph attribute (an If/Loop/Scan body).
bool HasBody(const onnx::NodeProto& node);

// True for the default ONNX domain ("" or "ai.onnx").
bool IsDefaultDomain(const std::string& domain);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_GRAPH_H_
