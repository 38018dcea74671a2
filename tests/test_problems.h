// Hand-written ShardingProblems for the sharder's unit tests.
#ifndef AUTOSHARD_TESTS_TEST_PROBLEMS_H_
#define AUTOSHARD_TESTS_TEST_PROBLEMS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/device_profile.h"
#include "costmodel/problem.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "proto/device.pb.h"

namespace autoshard::testing {

// Builds a problem from edges (producer, consumer) over nodes 0..n-1 given in
// topological order. Node i reads weight i when weight_bytes[i] > 0.
// num_activation_inputs counts producers (graph inputs are not modelled).
inline ShardingProblem MakeTestProblem(
    int n, const std::vector<std::pair<int, int>>& edges,
    const std::vector<int64_t>& weight_bytes,
    const std::vector<double>& flops) {
  ShardingProblem p;
  p.producers.resize(n);
  p.consumers.resize(n);
  for (auto [from, to] : edges) {
    p.producers[to].push_back(from);
    p.consumers[from].push_back(to);
  }
  for (int i = 0; i < n; ++i) {
    p.topo_order.push_back(i);
    p.names.push_back("n" + std::to_string(i));
    p.flops.push_back(flops[i]);
    p.activation_bytes.push_back(16);
    p.num_activation_inputs.push_back(
        static_cast<int32_t>(p.producers[i].size()));
    p.node_weights.emplace_back();
    if (weight_bytes[i] > 0) {
      p.node_weights[i].push_back(
          static_cast<int32_t>(p.weight_size_bytes.size()));
      p.weight_size_bytes.push_back(weight_bytes[i]);
    }
  }
  FillProblemDefaults(&p);
  return p;
}

// A toy chip: 4 tiles of 1000 bytes, 4-byte grains, 1 GFLOP/s, 1 GB/s links,
// no overhead; class "other": efficiency 1, 10 code bytes per tile;
// "matmul": efficiency 0.5, 0 code bytes.
inline proto::DeviceProfile ToyChip(int64_t bytes_per_tile = 1000) {
  proto::DeviceProfile p;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        name: "toy"
        tiles_per_ipu: 4
        bytes_per_tile: 1000
        peak_fp16_flops_per_s: 2e9
        peak_fp32_flops_per_s: 1e9
        link_bytes_per_s: 1e9
        available_memory_proportion: 0.5
        op_overhead_s: 0
        grain_bytes: 4
        op_classes { op_class: "other" efficiency: 1 code_bytes_per_tile: 10 }
        op_classes { op_class: "matmul" efficiency: 0.5 code_bytes_per_tile: 0 }
      )pb",
      &p));
  p.set_bytes_per_tile(bytes_per_tile);
  EXPECT_TRUE(ValidateDeviceProfile(p).ok());
  return p;
}

// Re-derives the one-tensor-per-node vectors after a test changed
// activation_bytes or is_graph_output.
inline void RefreshTensors(ShardingProblem* p) {
  p->output_bytes.clear();
  FillProblemDefaults(p);
}

// Two branches between n0 and n5: n0 -> n1 -> n2 -> n5 and n0 -> n3 -> n4 ->
// n5, taking 1, 2, 2, 2, 2, 1 s (toy chip: 1 GFLOP/s). n0's output is 5e8 B
// (0.5 s over the 1 GB/s link), n1's and n3's 1e8 B (0.1 s), the others
// 16 B (16 ns). With tiles of 1 GB everything fits; on 2 IPUs the best split
// is {n0, n1, n3} | {n2, n4, n5}, 5.2 s, and the best slicing of the order
// n0..n5 is {n0, n1, n2} | {n3, n4, n5}, 5.500000016 s.
inline ShardingProblem TwoBranches() {
  ShardingProblem p =
      MakeTestProblem(6, {{0, 1}, {1, 2}, {2, 5}, {0, 3}, {3, 4}, {4, 5}},
                      {0, 0, 0, 0, 0, 0}, {1e9, 2e9, 2e9, 2e9, 2e9, 1e9});
  p.activation_bytes = {500000000, 100000000, 16, 100000000, 16, 16};
  RefreshTensors(&p);
  return p;
}

}  // namespace autoshard::testing

#endif  // AUTOSHARD_TESTS_TEST_PROBLEMS_H_
