// The tile-memory model (DESIGN.md §3.3) and the performance model (§3.4):
// what a device profile says one IPU's part of a plan needs and costs.
//
// Note [Tile-memory model]
// Poplar places every tensor and every op's code across an IPU's tiles, and
// the compiler fails with "Out of memory on tile T: M bytes" when one tile
// overflows. The model predicts that answer without the compiler:
// - always live: the IPU's weights (each distinct weight once), exchange
//   buffers for cut tensors received and sent, and code + vertex state: each
//   non-constant op puts its class's code_bytes_per_tile on every tile it
//   spans, ceil(largest output bytes / grain) tiles, at least 1, at most all,
//   and each class with an op on the IPU puts its codelet_bytes_per_tile
//   (vertex code, shared by the class's ops) on every tile once; every tile
//   holds tile_fixed_bytes (stack, control code);
// - not always live: at the step of the IPU's schedule (its nodes in
//   topological order) where live activations plus the running op's
//   temporary memory peak. Each output tensor lives from its producer's step
//   to the last step of this IPU that reads it, a graph output to the end of
//   the schedule; tensors only other IPUs read live at their own step (the
//   exchange buffers hold them after). Cut tensors count per tensor: a
//   multi-output node sends only the outputs other IPUs read. Temporary memory
//   of matmul/conv ops is capped per tile at available_memory_proportion x
//   bytes_per_tile (Poplar's planner limit);
// - mapping: weights, exchange buffers, then the live activations, each
//   spread linearly over the tiles in grains starting where the last one
//   ended (Poplar's linear mapping), so G grains over T tiles give every tile
//   G / T grains and the next G mod T tiles one more; code goes on the tiles
//   following the cursor; the capped temporary memory goes on every tile.
// Every constant is the profile's. It is a model, not the compiler.
#ifndef AUTOSHARD_COSTMODEL_DEVICE_MODEL_H_
#define AUTOSHARD_COSTMODEL_DEVICE_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "base/saturating.h"
#include "costmodel/precision.h"
#include "costmodel/problem.h"
#include "proto/device.pb.h"

namespace autoshard {

// One IPU's memory under the tile-memory model. Bytes are totals over the
// IPU's tiles (after grain rounding), except the max_tile fields.
struct IpuMemory {
  int64_t weight_bytes = 0;
  int64_t code_bytes = 0;        // code, vertex state, per-tile fixed bytes
  int64_t exchange_bytes = 0;    // cut tensors received and sent
  int64_t activation_bytes = 0;  // live activations at the peak step
  int64_t temporary_bytes = 0;   // capped temporaries at the peak step
  int64_t max_tile_bytes = 0;    // the fullest tile
  int32_t max_tile = 0;          // its index on this IPU, 0..tiles-1
  bool fits = true;              // max_tile_bytes <= bytes_per_tile
  int64_t total_bytes() const {
    return SaturatingAdd(
        SaturatingAdd(SaturatingAdd(weight_bytes, code_bytes),
                      SaturatingAdd(exchange_bytes, activation_bytes)),
        temporary_bytes);
  }
};

// The performance model of a whole plan (DESIGN.md §3.4).
struct Performance {
  std::vector<double> stage_time_s;  // per IPU: compute + overhead + copies
  double bottleneck_s = 0;           // max stage time
  // batch / (bottleneck + the profile's step_fixed_s) (samples/s)
  double throughput_per_s = 0;
  double latency_s = 0;  // Σ stage times + step_fixed_s
  // LowerBound(k): no split onto k IPUs has a smaller bottleneck.
  double lower_bound_s = 0;
};

// Why small work is slow (docs/calibration.md §2): an op of `op_class`
// spreads its work over the `tiles` tiles by its largest output, in grains
// of work_grain_bytes, and takes as long as its busiest tile, which holds
// ceil(grains / tiles) of them. Its FLOP time is multiplied by that over the
// even share: ceil(output_bytes / (tiles x grain)) x tiles x grain /
// output_bytes (>= 1; below tiles x grain only output / grain tiles are
// busy). 1 when the class has no work_grain_bytes or the op has no output.
// E.g. 1,472 tiles x 1,000 B: a 147,200 B output 10 (147 tiles busy), a
// 1,472,000 B one 1, a 1,500,000 B one 2 x 1,472,000 / 1,500,000 = 1.9627
// (28 tiles hold a second grain).
double SmallWorkFactor(const proto::OpClassProfile& op_class, int32_t tiles,
                       int64_t output_bytes);

class DeviceModel {
 public:
  // `problem` must outlive the model. `precision` picks the peak FLOP/s
  // (fp16 or fp32) the compute times use.
  DeviceModel(const ShardingProblem& problem,
              const proto::DeviceProfile& profile, Precision precision);

  // Memory of IPU `ipu` when node i runs on ipu_of_node[i]. Cost:
  // O(all nodes + the IPU's edges + tiles).
  IpuMemory EvaluateMemory(absl::Span<const int32_t> ipu_of_node,
                           int32_t ipu) const;

  // The same when the caller knows the IPU's nodes in topological order
  // (`schedule`), for searches that re-cost one IPU at a time: O(the IPU's
  // nodes + edges + tiles). `step_scratch` must hold num_nodes() entries, all
  // -1; it is left that way.
  IpuMemory EvaluateSchedule(absl::Span<const int32_t> ipu_of_node, int32_t ipu,
                             absl::Span<const int32_t> schedule,
                             std::vector<int32_t>* step_scratch) const;

  // Stage times and pipeline figures for `num_ipus` IPUs; `batch` samples per
  // pipeline step (>= 1). The profile's step_fixed_s is in the throughput and
  // latency, not in the stage times or the bottleneck.
  Performance EvaluatePerformance(absl::Span<const int32_t> ipu_of_node,
                                  int num_ipus, int64_t batch) const;

  // A lower bound on the bottleneck of any split onto `num_ipus` IPUs: the
  // largest of Σ node times / k (DESIGN.md §3.4), the costliest node, and the
  // pigeonhole bound — of the j*k+1 costliest nodes some IPU runs j+1, so the
  // bottleneck is at least the sum of the j+1 cheapest of them, for every j.
  // Cut-tensor copies only add to stage times, so they are left out. O(n / k).
  double LowerBound(int num_ipus) const;

  // Code and vertex state node `n` puts on its IPU, over all the tiles it
  // spans (0 for folded constants). With the IPU's weights it is a lower
  // bound on what any IPU running `n` places: see SliceOptimally's pruning.
  int64_t CodeBytes(int32_t n) const {
    return code_bytes_per_tile_[n] * tiles_spanned_[n];
  }

  // Seconds of one stage's copies over one pipeline boundary: `bytes` /
  // link_bytes_per_s + transfer_fixed_s, 0 when nothing crosses it.
  double CopySeconds(double bytes) const {
    return bytes > 0 ? bytes / profile_.link_bytes_per_s() +
                           profile_.transfer_fixed_s()
                     : 0;
  }

  // Seconds node `n` takes on its IPU: FLOPs / (peak x class efficiency) x
  // SmallWorkFactor, plus the per-op overhead (and data_movement's bytes /
  // rate); 0 for folded constants. Plus, unless the profile's loads overlap
  // compute, the load of each remote weight whose first reader it is
  // (Note [Remote weights], costmodel/weight_location.h).
  double NodeTime(int32_t n) const { return node_time_s_[n]; }

  // "Out of memory on tile T: M bytes used but tiles only have B bytes of
  // memory (IPU I tile L)", the compiler's message, for IPU `ipu`'s fullest
  // tile (T global: ipu x tiles + local tile L, which the report uses).
  std::string OutOfMemoryMessage(int32_t ipu, const IpuMemory& memory) const;

  // Remote weights per IPU (Note [Remote weights]): the distinct remote
  // weights each IPU reads, their full bytes, the seconds their loads take
  // (every one) and the seconds not already in a node time on that IPU.
  struct RemoteLoads {
    std::vector<std::vector<int32_t>> weights;  // per IPU, ascending
    std::vector<int64_t> bytes;                 // per IPU
    std::vector<double> load_s;                 // per IPU
    std::vector<double> unfolded_s;             // per IPU
  };
  RemoteLoads RemoteLoadsOf(absl::Span<const int32_t> ipu_of_node,
                            int num_ipus) const;
  // Adds the loads to `stage_time_s` (per IPU): the unfolded seconds, or
  // with overlapping loads max(stage, loads).
  void AddRemoteLoads(absl::Span<const int32_t> ipu_of_node,
                      std::vector<double>* stage_time_s) const;

  const proto::DeviceProfile& profile() const { return profile_; }
  const ShardingProblem& problem() const { return problem_; }

  // The profile judges memory as plain bytes (proto::MemoryModel, issue
  // 31): an IPU is one pool of tiles_per_ipu x bytes_per_tile bytes holding
  // its distinct weights and its nodes' code bytes (a problem file's, else
  // none), and with MEMORY_MODEL_PLAIN_WEIGHTS_AND_ACTIVATIONS every output
  // tensor of its nodes; IpuMemory's max_tile is 0 and max_tile_bytes the
  // total. No exchange buffers, liveness or temporaries.
  bool PlainMemory() const {
    return profile_.memory_model() != proto::MEMORY_MODEL_TILES;
  }

 private:
  IpuMemory EvaluatePlainBytes(absl::Span<const int32_t> schedule) const;

  const ShardingProblem& problem_;
  proto::DeviceProfile profile_;
  std::vector<double> node_time_s_;
  // Weight -> the node its load is charged to (first reader in topological
  // order), -1: none (resident, or loads overlap compute).
  std::vector<int32_t> load_charged_to_;
  std::vector<int64_t> code_bytes_per_tile_;
  std::vector<int32_t> tiles_spanned_;
  // Node -> index into codelet_bytes_ (its op class), -1 for constants.
  std::vector<int8_t> codelet_of_;
  std::vector<int64_t> codelet_bytes_;  // per distinct op class
  // Prefix sums of the node times sorted in descending order (n + 1 values).
  std::vector<double> descending_prefix_s_;
};

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_DEVICE_MODEL_H_
