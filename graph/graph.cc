#include "graph/graph.h"

#include <algorithm>
#include <queue>

#include "absl/strings/str_cat.h"
#include "graph/step_counts.h"

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

  // Producer lists (deduplicated), then consumers as their inverse.
  std::vector<std::vector<NodeId>> producers(n);
  auto add_read = [&](NodeId id, const std::string& tensor) {
    if (tensor.empty()) return;
    auto it = g.producer_by_tensor_.find(tensor);
    if (it != g.producer_by_tensor_.end()) producers[id].push_back(it->second);
  };
  for (NodeId id = 0; id < n; ++id) {
    for (const auto& in : graph.node(id).input()) add_read(id, in);
    for (const auto& in : g.implicit_inputs_[id]) add_read(id, in);
    auto& p = producers[id];
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
  }
  std::vector<int32_t> consumer_count(n, 0);
  g.producer_offsets_.assign(n + 1, 0);
  for (NodeId id = 0; id < n; ++id) {
    g.producer_offsets_[id + 1] =
        g.producer_offsets_[id] + producers[id].size();
    for (NodeId p : producers[id]) ++consumer_count[p];
    g.producer_ids_.insert(g.producer_ids_.end(), producers[id].begin(),
                           producers[id].end());
  }
  g.consumer_offsets_.assign(n + 1, 0);
  for (NodeId id = 0; id < n; ++id) {
    g.consumer_offsets_[id + 1] = g.consumer_offsets_[id] + consumer_count[id];
  }
  g.consumer_ids_.resize(g.consumer_offsets_[n]);
  std::vector<int32_t> fill(g.consumer_offsets_.begin(),
                            g.consumer_offsets_.end() - 1);
  for (NodeId id = 0; id < n; ++id) {  // ids ascend, so consumers come sorted
    for (NodeId p : producers[id]) g.consumer_ids_[fill[p]++] = id;
  }

  // Kahn's algorithm; among ready nodes the lowest file index goes first.
  std::vector<int32_t> pending(n);
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (NodeId id = 0; id < n; ++id) {
    pending[id] = g.producer_offsets_[id + 1] - g.producer_offsets_[id];
    if (pending[id] == 0) ready.push(id);
  }
  g.topo_order_.reserve(n);
  while (!ready.empty()) {
    NodeId id = ready.top();
    ready.pop();
    g.topo_order_.push_back(id);
    for (NodeId c : g.consumers(id)) {
      if (--pending[c] == 0) ready.push(c);
    }
  }
  if (static_cast<int>(g.topo_order_.size()) != n) {
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
