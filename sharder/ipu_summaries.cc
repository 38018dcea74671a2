#include "sharder/ipu_summaries.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "solver/bound/certify.h"

namespace autoshard {

std::vector<proto::IpuCost> SummarizeIpus(const ShardingProblem& problem,
                                          const Assignment& assignment) {
  const int k = assignment.num_ipus();
  std::vector<proto::IpuCost> ipus(k);
  for (int i = 0; i < k; ++i) ipus[i].set_ipu(i);
  // (IPU, weight) pairs, deduplicated, so a weight counts once per IPU.
  std::vector<std::pair<int32_t, int32_t>> weight_on_ipu;
  for (int32_t node = 0; node < problem.num_nodes(); ++node) {
    proto::IpuCost& cost = ipus[assignment.ipu[node]];
    cost.set_num_nodes(cost.num_nodes() + 1);
    cost.set_flops(cost.flops() + problem.flops[node]);
    cost.set_activation_bytes(
        SaturatingAdd(cost.activation_bytes(), problem.activation_bytes[node]));
    for (int32_t w : problem.node_weights[node]) {
      weight_on_ipu.emplace_back(assignment.ipu[node], w);
    }
  }
  std::sort(weight_on_ipu.begin(), weight_on_ipu.end());
  weight_on_ipu.erase(std::unique(weight_on_ipu.begin(), weight_on_ipu.end()),
                      weight_on_ipu.end());
  for (auto [d, w] : weight_on_ipu) {
    ipus[d].set_weight_bytes(
        SaturatingAdd(ipus[d].weight_bytes(), problem.weight_size_bytes[w]));
  }
  if (assignment.RevisitsAnIpu()) {
    // Each stage's copies, summed over the stages an IPU runs.
    const std::vector<int32_t> ipu_of_stage = assignment.IpuOfStage();
    const CutBytes cut =
        ComputeStageCutBytes(problem, assignment.pipeline_stage, ipu_of_stage);
    for (size_t s = 0; s < ipu_of_stage.size(); ++s) {
      if (ipu_of_stage[s] < 0) continue;
      proto::IpuCost& cost = ipus[ipu_of_stage[s]];
      cost.set_cut_tensor_in_bytes(
          SaturatingAdd(cost.cut_tensor_in_bytes(), cut.in_bytes[s]));
      cost.set_cut_tensor_out_bytes(
          SaturatingAdd(cost.cut_tensor_out_bytes(), cut.out_bytes[s]));
    }
    return ipus;
  }
  const CutBytes cut = ComputeCutBytes(problem, assignment.ipu, k);
  for (int d = 0; d < k; ++d) {
    ipus[d].set_cut_tensor_in_bytes(cut.in_bytes[d]);
    ipus[d].set_cut_tensor_out_bytes(cut.out_bytes[d]);
  }
  return ipus;
}

std::vector<proto::CutTensor> ListCutTensors(const ShardingProblem& problem,
                                             const Graph& graph,
                                             const Assignment& assignment) {
  std::vector<proto::CutTensor> cut;
  std::vector<int32_t> readers;
  for (int32_t node = 0; node < problem.num_nodes(); ++node) {
    const int32_t d = assignment.ipu[node];
    for (size_t slot = 0; slot < problem.output_consumers[node].size();
         ++slot) {
      readers.clear();
      for (int32_t c : problem.output_consumers[node][slot]) {
        if (assignment.ipu[c] != d) readers.push_back(assignment.ipu[c]);
      }
      if (readers.empty()) continue;
      std::sort(readers.begin(), readers.end());
      readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
      proto::CutTensor& t = cut.emplace_back();
      t.set_tensor(graph.num_nodes() == problem.num_nodes()
                       ? graph.node(node).output(static_cast<int>(slot))
                       : absl::StrCat(problem.names[node], ":", slot));
      t.set_producer(problem.names[node]);
      t.set_from_ipu(d);
      for (int32_t r : readers) t.add_reader_ipus(r);
      t.set_bytes(problem.output_bytes[node][slot]);
    }
  }
  // Stable: equal sizes keep the producer's and slot's order.
  std::stable_sort(cut.begin(), cut.end(),
                   [](const proto::CutTensor& a, const proto::CutTensor& b) {
                     return a.bytes() > b.bytes();
                   });
  return cut;
}

proto::IpuMemory MemoryProto(const IpuMemory& m, int32_t ipu,
                             const proto::DeviceProfile& device) {
  proto::IpuMemory out;
  out.set_weight_bytes(m.weight_bytes);
  out.set_code_bytes(m.code_bytes);
  out.set_exchange_bytes(m.exchange_bytes);
  out.set_activation_bytes(m.activation_bytes);
  out.set_temporary_bytes(m.temporary_bytes);
  out.set_total_bytes(m.total_bytes());
  out.set_max_tile_bytes(m.max_tile_bytes);
  out.set_max_tile(static_cast<int64_t>(ipu) * device.tiles_per_ipu() +
                   m.max_tile);
  out.set_max_tile_on_ipu(m.max_tile);
  out.set_fits(m.fits);
  out.set_tile_margin_bytes(device.bytes_per_tile() - m.max_tile_bytes);
  return out;
}

void SetPerformanceProto(const Performance& perf, proto::Performance* out) {
  out->set_bottleneck_s(perf.bottleneck_s);
  out->set_throughput_per_s(perf.throughput_per_s);
  out->set_latency_s(perf.latency_s);
  out->set_lower_bound_s(perf.lower_bound_s);
  out->set_gap_percent(GapPercent(perf.bottleneck_s, perf.lower_bound_s));
  SetCertificate({perf.lower_bound_s, "cheap", 0}, out);
}

}  // namespace autoshard
