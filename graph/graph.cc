#include "graph/graph.h"

#include <algorithm>
#include <queue>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/step_counts.h"

namespace autoshard {
namespace {

// Adds to `reads` every name that `graph` (a body) reads but neither it nor
// an enclosing body defines. `defined` holds the enclosing bodies' names on
// entry and is restored on return, so nesting costs no copies.
void CollectBodyReads(const onnx::GraphProto& graph,
                      absl::flat_hash_set<std::string>* defined,
                      absl::flat_hash_set<std::string>* reads) {
  std::vector<std::string> added;
  auto define = [&](const std::string& name) {
    if (defined->insert(name).second) added.push_back(name);
  };
  for (const auto& vi : graph.input()) define(vi.name());
  for (const auto& t : graph.initializer()) define(t.name());
  for (const auto& t : graph.sparse_initializer()) define(t.values().name());
  for (const auto& node : graph.node()) {
    for (const auto& in : node.input()) {
      if (!in.empty() && !defined->contains(in)) reads->insert(in);
    }
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) CollectBodyReads(attr.g(), defined, reads);
      for (const auto& g : attr.graphs()) CollectBodyReads(g, defined, reads);
    }
    for (const auto& out : node.output()) define(out);
  }
  for (const std::string& name : added) defined->erase(name);
}

// Each node's producers (deduplicated, ascending): the nodes making its
// inputs and its bodies' implicit inputs.
std::vector<std::vector<NodeId>> ProducerLists(
    const onnx::GraphProto& graph,
    const absl::flat_hash_map<std::string, NodeId>& producer_by_tensor,
    const std::vector<std::vector<std::string>>& implicit_inputs) {
  const int n = graph.node_size();
  std::vector<std::vector<NodeId>> producers(n);
  auto add_read = [&](NodeId id, const std::string& tensor) {
    if (tensor.empty()) return;
    auto it = producer_by_tensor.find(tensor);
    if (it != producer_by_tensor.end()) producers[id].push_back(it->second);
  };
  for (NodeId id = 0; id < n; ++id) {
    for (const auto& in : graph.node(id).input()) add_read(id, in);
    for (const auto& in : implicit_inputs[id]) add_read(id, in);
    auto& p = producers[id];
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
  }
  return producers;
}

// The consumers of each node, the inverse of `producers` (ids ascend, so
// consumers come sorted).
std::vector<std::vector<NodeId>> Consumers(
    const std::vector<std::vector<NodeId>>& producers) {
  std::vector<std::vector<NodeId>> consumers(producers.size());
  for (NodeId id = 0; id < static_cast<NodeId>(producers.size()); ++id) {
    for (NodeId p : producers[id]) consumers[p].push_back(id);
  }
  return consumers;
}

// `lists` as CSR: offsets (size n + 1) into the concatenated ids.
void CsrOf(const std::vector<std::vector<NodeId>>& lists,
           std::vector<int32_t>* offsets, std::vector<NodeId>* ids) {
  offsets->assign(lists.size() + 1, 0);
  ids->clear();
  for (size_t id = 0; id < lists.size(); ++id) {
    (*offsets)[id + 1] =
        (*offsets)[id] + static_cast<int32_t>(lists[id].size());
    ids->insert(ids->end(), lists[id].begin(), lists[id].end());
  }
}

// Kahn's algorithm over `g`'s edges; among ready nodes the lowest file
// index goes first. Errors: InvalidArgument naming a node on a cycle.
absl::StatusOr<std::vector<NodeId>> TopologicalOrder(
    const onnx::GraphProto& graph, const Graph& g) {
  const int n = graph.node_size();
  std::vector<int32_t> pending(n);
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (NodeId id = 0; id < n; ++id) {
    pending[id] = static_cast<int32_t>(g.producers(id).size());
    if (pending[id] == 0) ready.push(id);
  }
  std::vector<NodeId> order;
  order.reserve(n);
  while (!ready.empty()) {
    NodeId id = ready.top();
    ready.pop();
    order.push_back(id);
    for (NodeId c : g.consumers(id)) {
      if (--pending[c] == 0) ready.push(c);
    }
  }
  if (static_cast<int>(order.size()) == n) return order;
  // Walk producers among the unfinished nodes until one repeats: that node
  // is on a cycle.
  NodeId at = 0;
  while (pending[at] == 0) ++at;
  std::vector<bool> seen(n, false);
  while (!seen[at]) {
    seen[at] = true;
    for (NodeId p : g.producers(at)) {
      if (pending[p] > 0) {
        at = p;
        break;
      }
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "the graph has a cycle through node '", graph.node(at).name(), "' (",
      graph.node(at).op_type(), ")"));
}

}  // namespace

std::vector<std::string> CollectImplicitInputs(const onnx::NodeProto& node) {
  absl::flat_hash_set<std::string> reads, defined;
  for (const auto& attr : node.attribute()) {
    if (attr.has_g()) CollectBodyReads(attr.g(), &defined, &reads);
    for (const auto& g : attr.graphs()) CollectBodyReads(g, &defined, &reads);
  }
  std::vector<std::string> sorted(reads.begin(), reads.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

bool HasBody(const onnx::NodeProto& node) {
  for (const auto& attr : node.attribute()) {
    if (attr.has_g() || attr.graphs_size() > 0) return true;
  }
  return false;
}

bool IsDefaultDomain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

absl::StatusOr<Graph> Graph::Build(const onnx::GraphProto& graph) {
  ++ThreadStepCounts().dag_builds;
  Graph g;
  const int n = graph.node_size();
  g.nodes_.reserve(n);
  g.implicit_inputs_.resize(n);
  for (const auto& t : graph.initializer()) g.initializers_.insert(t.name());
  for (NodeId id = 0; id < n; ++id) {
    const onnx::NodeProto& node = graph.node(id);
    g.nodes_.push_back(&node);
    if (!node.name().empty()) g.node_by_name_.emplace(node.name(), id);
    for (const auto& out : node.output()) {
      if (out.empty()) continue;
      auto [it, inserted] = g.producer_by_tensor_.emplace(out, id);
      if (!inserted) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor '", out, "' is produced by two nodes: '",
                         graph.node(it->second).name(), "' (",
                         graph.node(it->second).op_type(), ") and '",
                         node.name(), "' (", node.op_type(), ")"));
      }
    }
    if (HasBody(node)) g.implicit_inputs_[id] = CollectImplicitInputs(node);
  }

  g.graph_output_.assign(n, 0);
  for (const auto& out : graph.output()) {
    g.graph_output_names_.insert(out.name());
    auto it = g.producer_by_tensor_.find(out.name());
    if (it != g.producer_by_tensor_.end()) g.graph_output_[it->second] = 1;
  }

  const std::vector<std::vector<NodeId>> producers =
      ProducerLists(graph, g.producer_by_tensor_, g.implicit_inputs_);
  CsrOf(producers, &g.producer_offsets_, &g.producer_ids_);
  CsrOf(Consumers(producers), &g.consumer_offsets_, &g.consumer_ids_);
  ASSIGN_OR_RETURN(g.topo_order_, TopologicalOrder(graph, g));
  g.topo_position_.resize(n);
  for (int32_t i = 0; i < n; ++i) g.topo_position_[g.topo_order_[i]] = i;
  return g;
}

absl::Span<const NodeId> Graph::producers(NodeId id) const {
  return absl::MakeConstSpan(producer_ids_.data() + producer_offsets_[id],
                             producer_offsets_[id + 1] - producer_offsets_[id]);
}

absl::Span<const NodeId> Graph::consumers(NodeId id) const {
  return absl::MakeConstSpan(consumer_ids_.data() + consumer_offsets_[id],
                             consumer_offsets_[id + 1] - consumer_offsets_[id]);
}

NodeId Graph::producer_of(const std::string& tensor) const {
  auto it = producer_by_tensor_.find(tensor);
  return it == producer_by_tensor_.end() ? kNoNode : it->second;
}

NodeId Graph::FindNode(const std::string& name) const {
  auto it = node_by_name_.find(name);
  return it == node_by_name_.end() ? kNoNode : it->second;
}

}  // namespace autoshard
