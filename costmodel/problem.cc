#include "costmodel/problem.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "costmodel/cost_model.h"
#include "graph/shapes.h"

namespace autoshard {

int64_t ShardingProblem::NodeWeightBytes(int32_t n) const {
  int64_t bytes = 0;
  for (int32_t w : node_weights[n]) bytes += weight_size_bytes[w];
  return bytes;
}

namespace {

// A tensor of IPU d read by `consumers`, through host memory: sent once,
// received once by each other IPU that reads it.
void AddHostCopies(const std::vector<int32_t>& consumers,
                   const std::vector<int32_t>& ipu_of_node, int32_t d,
                   int64_t bytes, std::vector<int32_t>* readers,
                   CutBytes* cut) {
  readers->clear();
  for (int32_t c : consumers)
    if (ipu_of_node[c] != d) readers->push_back(ipu_of_node[c]);
  std::sort(readers->begin(), readers->end());
  readers->erase(std::unique(readers->begin(), readers->end()), readers->end());
  if (readers->empty()) return;
  cut->out_bytes[d] = SaturatingAdd(cut->out_bytes[d], bytes);
  for (int32_t r : *readers)
    cut->in_bytes[r] = SaturatingAdd(cut->in_bytes[r], bytes);
}

}  // namespace

CutBytes ComputeCutBytes(const ShardingProblem& problem,
                         const std::vector<int32_t>& ipu_of_node,
                         int num_ipus) {
  CutBytes cut;
  cut.in_bytes.assign(num_ipus, 0);
  cut.out_bytes.assign(num_ipus, 0);
  std::vector<int32_t> earlier;  // readers on earlier IPUs (not monotone)
  for (int32_t node = 0; node < problem.num_nodes(); ++node) {
    const int32_t d = ipu_of_node[node];
    for (size_t slot = 0; slot < problem.output_bytes[node].size(); ++slot) {
      int32_t last = d;
      earlier.clear();
      for (int32_t c : problem.output_consumers[node][slot]) {
        last = std::max(last, ipu_of_node[c]);
        if (ipu_of_node[c] < d) earlier.push_back(ipu_of_node[c]);
      }
      const int64_t bytes = problem.output_bytes[node][slot];
      if (problem.copies_through_host) {
        AddHostCopies(problem.output_consumers[node][slot], ipu_of_node, d,
                      bytes, &earlier, &cut);
        continue;
      }
      // Copied stage by stage to the last IPU that reads it.
      for (int32_t x = d; x < last; ++x) {
        cut.out_bytes[x] = SaturatingAdd(cut.out_bytes[x], bytes);
        cut.in_bytes[x + 1] = SaturatingAdd(cut.in_bytes[x + 1], bytes);
      }
      std::sort(earlier.begin(), earlier.end());
      earlier.erase(std::unique(earlier.begin(), earlier.end()), earlier.end());
      for (int32_t r : earlier) {
        cut.out_bytes[d] = SaturatingAdd(cut.out_bytes[d], bytes);
        cut.in_bytes[r] = SaturatingAdd(cut.in_bytes[r], bytes);
      }
    }
  }
  return cut;
}

CutBytes ComputeStageCutBytes(const ShardingProblem& problem,
                              const std::vector<int32_t>& stage_of_node,
                              const std::vector<int32_t>& ipu_of_stage) {
  const int num_stages = static_cast<int>(ipu_of_stage.size());
  CutBytes cut;
  cut.in_bytes.assign(num_stages, 0);
  cut.out_bytes.assign(num_stages, 0);
  std::vector<int32_t> readers;
  for (int32_t node = 0; node < problem.num_nodes(); ++node) {
    const int32_t s = stage_of_node[node];
    const int32_t d = ipu_of_stage[s];
    for (size_t slot = 0; slot < problem.output_bytes[node].size(); ++slot) {
      readers.clear();
      for (int32_t c : problem.output_consumers[node][slot]) {
        if (ipu_of_stage[stage_of_node[c]] != d)
          readers.push_back(stage_of_node[c]);
      }
      if (readers.empty()) continue;
      const int64_t bytes = problem.output_bytes[node][slot];
      std::sort(readers.begin(), readers.end());
      readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
      if (problem.copies_through_host) {
        cut.out_bytes[s] = SaturatingAdd(cut.out_bytes[s], bytes);
        for (int32_t r : readers)
          cut.in_bytes[r] = SaturatingAdd(cut.in_bytes[r], bytes);
        continue;
      }
      // Stage by stage to the last reader; a reader on an earlier stage
      // (not monotone) gets its own copy.
      for (int32_t x = s; x < readers.back(); ++x) {
        cut.out_bytes[x] = SaturatingAdd(cut.out_bytes[x], bytes);
        cut.in_bytes[x + 1] = SaturatingAdd(cut.in_bytes[x + 1], bytes);
      }
      for (int32_t r : readers) {
        if (r >= s) break;
        cut.out_bytes[s] = SaturatingAdd(cut.out_bytes[s], bytes);
        cut.in_bytes[r] = SaturatingAdd(cut.in_bytes[r], bytes);
      }
    }
  }
  return cut;
}

void FillProblemDefaults(ShardingProblem* p) {
  const size_t n = p->topo_order.size();
  p->topo_position.assign(n, 0);
  for (size_t i = 0; i < n; ++i)
    p->topo_position[p->topo_order[i]] = static_cast<int32_t>(i);
  if (p->op_class.size() != n) p->op_class.assign(n, "other");
  if (p->temporary_bytes.size() != n) p->temporary_bytes.assign(n, 0);
  if (p->largest_output_bytes.size() != n)
    p->largest_output_bytes = p->activation_bytes;
  if (p->is_constant.size() != n) p->is_constant.assign(n, 0);
  if (p->is_graph_output.size() != n) {
    // Hand-written problems: the nodes nothing reads are the outputs.
    p->is_graph_output.assign(n, 0);
    for (size_t i = 0; i < n; ++i)
      p->is_graph_output[i] = p->consumers[i].empty() ? 1 : 0;
  }
  if (p->output_bytes.size() != n) {
    // One tensor per node: its activation bytes, read by every consumer.
    p->output_bytes.assign(n, {});
    p->output_consumers.assign(n, {});
    p->output_is_graph_output.assign(n, {});
    p->input_tensors.assign(n, {});
    for (size_t i = 0; i < n; ++i) {
      p->output_bytes[i] = {p->activation_bytes[i]};
      p->output_consumers[i] = {p->consumers[i]};
      p->output_is_graph_output[i] = {p->is_graph_output[i]};
    }
    for (size_t i = 0; i < n; ++i) {
      for (int32_t c : p->consumers[i]) {
        p->input_tensors[c].emplace_back(static_cast<int32_t>(i), 0);
      }
    }
  }
}

ShardingProblem MakeProblem(const Graph& graph, const ModelCosts& costs) {
  const int n = graph.num_nodes();
  ShardingProblem p;
  p.producers.resize(n);
  p.consumers.resize(n);
  p.flops.resize(n);
  p.activation_bytes.resize(n);
  p.names.resize(n);
  for (NodeId id = 0; id < n; ++id) {
    auto prod = graph.producers(id);
    auto cons = graph.consumers(id);
    p.producers[id].assign(prod.begin(), prod.end());
    p.consumers[id].assign(cons.begin(), cons.end());
    p.flops[id] = costs.nodes[id].flops;
    p.activation_bytes[id] = costs.nodes[id].activation_bytes;
    p.names[id] = graph.name(id);
    p.op_class.push_back(costs.nodes[id].op_class);
    p.temporary_bytes.push_back(costs.nodes[id].temporary_bytes);
    p.largest_output_bytes.push_back(costs.nodes[id].largest_output_bytes);
    p.is_constant.push_back(costs.nodes[id].is_constant ? 1 : 0);
    p.is_graph_output.push_back(graph.produces_graph_output(id) ? 1 : 0);
  }
  // Tensors: each output slot, its readers (explicit and implicit inputs).
  p.output_bytes.resize(n);
  p.output_consumers.resize(n);
  p.output_is_graph_output.resize(n);
  p.input_tensors.resize(n);
  absl::flat_hash_map<std::string, std::pair<int32_t, int32_t>> slot_of;
  for (NodeId id = 0; id < n; ++id) {
    const onnx::NodeProto& node = graph.node(id);
    p.output_bytes[id].assign(node.output_size(), 0);
    p.output_consumers[id].resize(node.output_size());
    p.output_is_graph_output[id].assign(node.output_size(), 0);
    for (int slot = 0; slot < node.output_size(); ++slot) {
      if (static_cast<size_t>(slot) < costs.nodes[id].output_bytes.size()) {
        p.output_bytes[id][slot] = costs.nodes[id].output_bytes[slot];
      }
      if (node.output(slot).empty()) continue;
      slot_of[node.output(slot)] = {id, slot};
      p.output_is_graph_output[id][slot] =
          graph.is_graph_output(node.output(slot)) ? 1 : 0;
    }
  }
  for (NodeId id = 0; id < n; ++id) {
    auto read = [&](const std::string& name) {
      auto it = slot_of.find(name);
      if (it == slot_of.end()) return;
      p.input_tensors[id].push_back(it->second);
    };
    for (const auto& in : graph.node(id).input()) read(in);
    for (const auto& in : graph.implicit_inputs(id)) read(in);
    auto& inputs = p.input_tensors[id];
    std::sort(inputs.begin(), inputs.end());
    inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
    for (auto [producer, slot] : inputs)
      p.output_consumers[producer][slot].push_back(id);
  }
  auto order = graph.topological_order();
  p.topo_order.assign(order.begin(), order.end());
  p.num_activation_inputs = costs.num_activation_inputs;
  p.node_weights = costs.node_weights;
  p.weight_size_bytes.reserve(costs.weights.size());
  for (const Weight& w : costs.weights) {
    p.weight_size_bytes.push_back(w.size_bytes);
    p.weight_is_float.push_back(w.floating ? 1 : 0);
  }
  FillProblemDefaults(&p);
  return p;
}

}  // namespace autoshard
