#include "costmodel/device_model.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "absl/strings/str_cat.h"
#include "base/step_counts.h"
#include "costmodel/device_profile.h"
#include "graph/shapes.h"

namespace autoshard {
namespace {

// Per-tile bytes of one IPU as a uniform part plus cyclic intervals (a
// difference array), so adding a tensor costs O(1) and the fullest tile
// O(tiles). See Note [Tile-memory model] in the header.
class TileMap {
 public:
  TileMap(int32_t tiles, int64_t grain_bytes)
      : tiles_(tiles), grain_(grain_bytes), diff_(tiles + 1, 0) {}

  // Spreads `bytes` linearly in grains from the cursor; returns the bytes
  // placed (rounded up to whole grains).
  int64_t AddTensor(int64_t bytes) {
    if (bytes <= 0) return 0;
    const int64_t grains = bytes / grain_ + (bytes % grain_ != 0 ? 1 : 0);
    uniform_ = SaturatingAdd(uniform_, SaturatingMul(grains / tiles_, grain_));
    const int32_t rest = static_cast<int32_t>(grains % tiles_);
    AddCyclic(rest, grain_);
    return SaturatingMul(grains, grain_);
  }

  // Puts `bytes_per_tile` on each of the `span` tiles from the cursor.
  int64_t AddPerTile(int64_t bytes_per_tile, int32_t span) {
    if (bytes_per_tile <= 0 || span <= 0) return 0;
    if (span >= tiles_) {
      uniform_ = SaturatingAdd(uniform_, bytes_per_tile);
    } else {
      AddCyclic(span, bytes_per_tile);
    }
    return SaturatingMul(bytes_per_tile, std::min(span, tiles_));
  }

  // Puts `bytes_per_tile` on every tile.
  int64_t AddUniform(int64_t bytes_per_tile) {
    uniform_ = SaturatingAdd(uniform_, bytes_per_tile);
    return SaturatingMul(bytes_per_tile, tiles_);
  }

  // The fullest tile (lowest index on a tie) and its bytes.
  std::pair<int32_t, int64_t> Fullest() const {
    int64_t running = 0, best = -1;
    int32_t best_tile = 0;
    for (int32_t t = 0; t < tiles_; ++t) {
      running += diff_[t];
      if (running > best) {
        best = running;
        best_tile = t;
      }
    }
    return {best_tile, SaturatingAdd(uniform_, best)};
  }

 private:
  // Adds `value` to the `count` tiles from the cursor (wrapping), then moves
  // the cursor past them.
  void AddCyclic(int32_t count, int64_t value) {
    if (count <= 0) return;
    const int32_t end = cursor_ + count;
    if (end <= tiles_) {
      diff_[cursor_] += value;
      diff_[end] -= value;
    } else {
      diff_[cursor_] += value;
      diff_[tiles_] -= value;
      diff_[0] += value;
      diff_[end - tiles_] -= value;
    }
    cursor_ = end % tiles_;
  }

  const int32_t tiles_;
  const int64_t grain_;
  std::vector<int64_t> diff_;
  int64_t uniform_ = 0;
  int32_t cursor_ = 0;
};

// The weights `schedule`'s nodes read, each once, placed on `map`; returns
// their bytes.
int64_t PlaceWeights(const ShardingProblem& p,
                     absl::Span<const int32_t> schedule, TileMap* map) {
  std::vector<int32_t> weights;
  for (int32_t node : schedule) {
    weights.insert(weights.end(), p.node_weights[node].begin(),
                   p.node_weights[node].end());
  }
  std::sort(weights.begin(), weights.end());
  weights.erase(std::unique(weights.begin(), weights.end()), weights.end());
  int64_t bytes = 0;
  for (int32_t w : weights)
    bytes = SaturatingAdd(bytes, map->AddTensor(p.weight_size_bytes[w]));
  return bytes;
}

// Exchange buffers: each tensor of IPU `ipu` another IPU reads (sent), and
// each tensor of another IPU read here (received), once; returns their
// bytes.
int64_t PlaceExchangeBuffers(const ShardingProblem& p,
                             absl::Span<const int32_t> ipu_of_node, int32_t ipu,
                             absl::Span<const int32_t> schedule, TileMap* map) {
  int64_t exchange_bytes = 0;
  std::vector<std::pair<int32_t, int32_t>> received;
  for (int32_t node : schedule) {
    for (size_t slot = 0; slot < p.output_bytes[node].size(); ++slot) {
      bool sends = false;
      for (int32_t c : p.output_consumers[node][slot])
        sends |= ipu_of_node[c] != ipu;
      if (sends) {
        exchange_bytes = SaturatingAdd(
            exchange_bytes, map->AddTensor(p.output_bytes[node][slot]));
      }
    }
    for (auto [producer, slot] : p.input_tensors[node]) {
      if (ipu_of_node[producer] != ipu) received.emplace_back(producer, slot);
    }
  }
  std::sort(received.begin(), received.end());
  received.erase(std::unique(received.begin(), received.end()), received.end());
  for (auto [producer, slot] : received) {
    exchange_bytes = SaturatingAdd(
        exchange_bytes, map->AddTensor(p.output_bytes[producer][slot]));
  }
  return exchange_bytes;
}

// A node's temporaries per tile, spread over `tiles`, at most `cap`.
int64_t CappedTempPerTile(int64_t temporary_bytes, int32_t tiles, int64_t cap) {
  const int64_t per_tile =
      temporary_bytes / tiles + (temporary_bytes % tiles != 0 ? 1 : 0);
  return std::min(per_tile, cap);
}

// One activation tensor: alive from step `start` to `end` (inclusive).
struct Live {
  int32_t start, end;
  int64_t bytes;
  bool weight = false;  // a loaded remote weight (Note [Remote weights])
};

// The remote weights `schedule` reads, each once: (weight, first step,
// last step) in the schedule.
std::vector<Live> LoadedWeights(const ShardingProblem& p,
                                absl::Span<const int32_t> schedule) {
  std::vector<Live> out;
  if (p.weight_loaded_bytes.empty()) return out;
  std::vector<std::pair<int32_t, int32_t>> reads;  // (weight, step)
  for (int32_t s = 0; s < static_cast<int32_t>(schedule.size()); ++s) {
    if (p.is_constant[schedule[s]]) continue;
    for (int32_t w : p.node_weights[schedule[s]])
      if (p.weight_loaded_bytes[w] > 0) reads.emplace_back(w, s);
  }
  std::sort(reads.begin(), reads.end());
  for (size_t i = 0; i < reads.size();) {
    size_t j = i;
    while (j + 1 < reads.size() && reads[j + 1].first == reads[i].first) ++j;
    out.push_back({reads[i].second, reads[j].second,
                   p.weight_loaded_bytes[reads[i].first], true});
    i = j + 1;
  }
  return out;
}

// The activations of a schedule and its peak step.
struct Liveness {
  std::vector<Live> tensors;
  int32_t peak_step = 0;
};

// Liveness over the schedule, per tensor: alive from its producer's step to
// its last reader on this IPU; a graph output to the end of the schedule
// (it is streamed out then); read by no one here: its own step only (a cut
// tensor leaves through the exchange buffers). The peak step has the most
// live bytes plus its op's temporaries. Bytes per step in double: only used
// to find the peak step, and safe from overflow on absurd shapes (the tile
// map saturates).
template <typename TempPerTile>
Liveness PeakStep(const ShardingProblem& p, absl::Span<const int32_t> schedule,
                  const std::vector<int32_t>& step_of, int32_t tiles,
                  const TempPerTile& temp_per_tile) {
  Liveness out;
  const int32_t steps = static_cast<int32_t>(schedule.size());
  std::vector<double> delta(steps + 1, 0);
  for (int32_t s = 0; s < steps; ++s) {
    const int32_t node = schedule[s];
    for (size_t slot = 0; slot < p.output_bytes[node].size(); ++slot) {
      const int64_t bytes = p.output_bytes[node][slot];
      if (bytes <= 0) continue;
      int32_t end = s;
      for (int32_t c : p.output_consumers[node][slot]) {
        if (step_of[c] >= 0) end = std::max(end, step_of[c]);
      }
      if (p.output_is_graph_output[node][slot]) end = steps - 1;
      out.tensors.push_back({s, end, bytes});
      delta[s] += static_cast<double>(bytes);
      delta[end + 1] -= static_cast<double>(bytes);
    }
  }
  for (const Live& w : LoadedWeights(p, schedule)) {
    out.tensors.push_back(w);
    delta[w.start] += static_cast<double>(w.bytes);
    delta[w.end + 1] -= static_cast<double>(w.bytes);
  }
  double live = 0, peak = -1;
  for (int32_t s = 0; s < steps; ++s) {
    live += delta[s];
    const double total =
        live + static_cast<double>(temp_per_tile(schedule[s])) * tiles;
    if (total > peak) {
      peak = total;
      out.peak_step = s;
    }
  }
  return out;
}

}  // namespace

double SmallWorkFactor(const proto::OpClassProfile& op_class, int32_t tiles,
                       int64_t output_bytes) {
  if (op_class.work_grain_bytes() <= 0 || output_bytes <= 0) return 1;
  // One grain on every tile: the most work one pass of the tiles spreads.
  const double full = static_cast<double>(tiles) *
                      static_cast<double>(op_class.work_grain_bytes());
  const double out = static_cast<double>(output_bytes);
  return std::ceil(out / full) * full / out;
}

DeviceModel::DeviceModel(const ShardingProblem& problem,
                         const proto::DeviceProfile& profile,
                         Precision precision)
    : problem_(problem), profile_(profile) {
  ++ThreadStepCounts().device_models;
  const int n = problem.num_nodes();
  const double peak = precision == Precision::kFp16
                          ? profile.peak_fp16_flops_per_s()
                          : profile.peak_fp32_flops_per_s();
  const int32_t tiles = profile.tiles_per_ipu();
  node_time_s_.assign(n, 0);
  code_bytes_per_tile_.assign(n, 0);
  tiles_spanned_.assign(n, 0);
  codelet_of_.assign(n, -1);
  // Note [Remote weights]: each load is charged to its weight's first
  // (non-constant) reader, unless loads overlap compute.
  std::vector<double> load_s(n, 0);
  load_charged_to_.assign(problem.weight_load_s.size(), -1);
  if (!profile.remote_loads_overlap_compute()) {
    for (int32_t node : problem.topo_order) {
      if (problem.is_constant[node]) continue;
      for (int32_t w : problem.node_weights[node]) {
        if (static_cast<size_t>(w) >= problem.weight_load_s.size() ||
            problem.weight_load_s[w] <= 0 || load_charged_to_[w] >= 0)
          continue;
        load_charged_to_[w] = node;
        load_s[node] += problem.weight_load_s[w];
      }
    }
  }
  std::vector<const proto::OpClassProfile*> classes;
  for (int32_t node = 0; node < n; ++node) {
    if (problem.is_constant[node]) continue;
    const proto::OpClassProfile& c = OpClassOf(profile, problem.op_class[node]);
    auto it = std::find(classes.begin(), classes.end(), &c);
    codelet_of_[node] = static_cast<int8_t>(it - classes.begin());
    if (it == classes.end()) {
      classes.push_back(&c);
      codelet_bytes_.push_back(c.codelet_bytes_per_tile());
    }
    node_time_s_[node] =
        problem.flops[node] / (peak * c.efficiency()) *
            SmallWorkFactor(c, tiles, problem.largest_output_bytes[node]) +
        (c.has_op_overhead_s() ? c.op_overhead_s() : profile.op_overhead_s());
    if (c.output_bytes_per_s() > 0) {
      node_time_s_[node] +=
          static_cast<double>(problem.activation_bytes[node]) /
          c.output_bytes_per_s();
    }
    node_time_s_[node] += load_s[node];
    code_bytes_per_tile_[node] = c.code_bytes_per_tile();
    const int64_t out = problem.largest_output_bytes[node];
    const int64_t grains =
        out / profile.grain_bytes() + (out % profile.grain_bytes() != 0);
    tiles_spanned_[node] =
        static_cast<int32_t>(std::clamp<int64_t>(grains, 1, tiles));
    if (PlainMemory()) {
      // One pool: a node's code is its own code_bytes, on one "tile".
      code_bytes_per_tile_[node] = 0;
      tiles_spanned_[node] = 1;
    }
    // A problem file's own figures (ShardingProblem::node_time_s,
    // code_bytes; negative: derived).
    if (!problem.node_time_s.empty() && problem.node_time_s[node] >= 0)
      node_time_s_[node] = problem.node_time_s[node];
    if (!problem.code_bytes.empty() && problem.code_bytes[node] >= 0) {
      code_bytes_per_tile_[node] =
          (problem.code_bytes[node] + tiles_spanned_[node] - 1) /
          tiles_spanned_[node];
    }
  }
  std::vector<double> descending = node_time_s_;
  std::sort(descending.begin(), descending.end(), std::greater<double>());
  descending_prefix_s_.assign(n + 1, 0);
  for (int32_t i = 0; i < n; ++i)
    descending_prefix_s_[i + 1] = descending_prefix_s_[i] + descending[i];
}

IpuMemory DeviceModel::EvaluateMemory(absl::Span<const int32_t> ipu_of_node,
                                      int32_t ipu) const {
  std::vector<int32_t> schedule;
  for (int32_t node : problem_.topo_order) {
    if (ipu_of_node[node] == ipu) schedule.push_back(node);
  }
  std::vector<int32_t> step_scratch(problem_.num_nodes(), -1);
  return EvaluateSchedule(ipu_of_node, ipu, schedule, &step_scratch);
}

IpuMemory DeviceModel::EvaluatePlainBytes(
    absl::Span<const int32_t> schedule) const {
  IpuMemory m;
  TileMap pool(1, 1);  // one tile, one-byte grains: plain sums
  m.weight_bytes = PlaceWeights(problem_, schedule, &pool);
  // Loaded remote weights: the most alive at once (each from its first to
  // its last reader; Note [Remote weights]).
  const std::vector<Live> loaded = LoadedWeights(problem_, schedule);
  if (!loaded.empty()) {
    std::vector<int64_t> delta(schedule.size() + 1, 0);
    for (const Live& w : loaded) {
      delta[w.start] = SaturatingAdd(delta[w.start], w.bytes);
      delta[w.end + 1] -= w.bytes;
    }
    int64_t live = 0, peak = 0;
    for (size_t s = 0; s < schedule.size(); ++s) {
      live = SaturatingAdd(live, delta[s]);
      peak = std::max(peak, live);
    }
    m.weight_bytes = SaturatingAdd(m.weight_bytes, peak);
  }
  for (int32_t node : schedule) {
    m.code_bytes = SaturatingAdd(m.code_bytes, CodeBytes(node));
    if (profile_.memory_model() ==
        proto::MEMORY_MODEL_PLAIN_WEIGHTS_AND_ACTIVATIONS) {
      for (int64_t bytes : problem_.output_bytes[node])
        m.activation_bytes = SaturatingAdd(m.activation_bytes, bytes);
    }
  }
  m.max_tile = 0;
  m.max_tile_bytes = m.total_bytes();
  m.fits = m.max_tile_bytes <= SaturatingMul(int64_t{profile_.tiles_per_ipu()},
                                             profile_.bytes_per_tile());
  return m;
}

IpuMemory DeviceModel::EvaluateSchedule(
    absl::Span<const int32_t> ipu_of_node, int32_t ipu,
    absl::Span<const int32_t> schedule,
    std::vector<int32_t>* step_scratch) const {
  if (PlainMemory()) return EvaluatePlainBytes(schedule);
  const ShardingProblem& p = problem_;
  const int32_t tiles = profile_.tiles_per_ipu();
  const int64_t temp_cap_per_tile =
      static_cast<int64_t>(profile_.available_memory_proportion() *
                           static_cast<double>(profile_.bytes_per_tile()));
  auto temp_per_tile = [&](int32_t node) {
    return CappedTempPerTile(p.temporary_bytes[node], tiles, temp_cap_per_tile);
  };
  // Each scheduled node's step (reset before returning).
  std::vector<int32_t>& step_of = *step_scratch;
  const int32_t steps = static_cast<int32_t>(schedule.size());
  for (int32_t s = 0; s < steps; ++s) step_of[schedule[s]] = s;
  TileMap map(tiles, profile_.grain_bytes());
  IpuMemory m;
  // Always live: weights, then exchange buffers.
  m.weight_bytes = PlaceWeights(p, schedule, &map);
  m.exchange_bytes = PlaceExchangeBuffers(p, ipu_of_node, ipu, schedule, &map);
  // Not always live: the activations alive at the peak step, then the code,
  // then the running op's temporaries.
  const Liveness liveness =
      PeakStep(p, schedule, step_of, tiles, temp_per_tile);
  for (const Live& t : liveness.tensors) {
    if (t.start <= liveness.peak_step && t.end >= liveness.peak_step) {
      int64_t& kind = t.weight ? m.weight_bytes : m.activation_bytes;
      kind = SaturatingAdd(kind, map.AddTensor(t.bytes));
    }
  }
  // Code: each op's on the tiles it spans, each class's codelets once on
  // every tile, and the per-tile fixed bytes.
  std::vector<uint8_t> codelet_placed(codelet_bytes_.size(), 0);
  for (int32_t node : schedule) {
    m.code_bytes = SaturatingAdd(
        m.code_bytes,
        map.AddPerTile(code_bytes_per_tile_[node], tiles_spanned_[node]));
    const int8_t c = codelet_of_[node];
    if (c >= 0 && !codelet_placed[c]) {
      codelet_placed[c] = 1;
      m.code_bytes =
          SaturatingAdd(m.code_bytes, map.AddUniform(codelet_bytes_[c]));
    }
  }
  m.code_bytes =
      SaturatingAdd(m.code_bytes, map.AddUniform(profile_.tile_fixed_bytes()));
  if (steps > 0)
    m.temporary_bytes =
        map.AddUniform(temp_per_tile(schedule[liveness.peak_step]));
  for (int32_t node : schedule) step_of[node] = -1;
  auto [tile, bytes] = map.Fullest();
  m.max_tile = tile;
  m.max_tile_bytes = bytes;
  m.fits = bytes <= profile_.bytes_per_tile();
  return m;
}

Performance DeviceModel::EvaluatePerformance(
    absl::Span<const int32_t> ipu_of_node, int num_ipus, int64_t batch) const {
  Performance perf;
  perf.stage_time_s.assign(num_ipus, 0);
  for (int32_t node = 0; node < problem_.num_nodes(); ++node) {
    perf.stage_time_s[ipu_of_node[node]] += node_time_s_[node];
  }
  const CutBytes cut = ComputeCutBytes(
      problem_, std::vector<int32_t>(ipu_of_node.begin(), ipu_of_node.end()),
      num_ipus);
  for (int d = 0; d < num_ipus; ++d) {
    perf.stage_time_s[d] += CopySeconds(static_cast<double>(cut.in_bytes[d])) +
                            CopySeconds(static_cast<double>(cut.out_bytes[d]));
  }
  AddRemoteLoads(ipu_of_node, &perf.stage_time_s);
  for (int d = 0; d < num_ipus; ++d) {
    perf.bottleneck_s = std::max(perf.bottleneck_s, perf.stage_time_s[d]);
    perf.latency_s += perf.stage_time_s[d];
  }
  // The step's fixed time (host sync) once per batch, on top of the stages.
  const double step_s = perf.bottleneck_s + profile_.step_fixed_s();
  perf.latency_s += profile_.step_fixed_s();
  perf.throughput_per_s =
      step_s > 0 ? static_cast<double>(std::max<int64_t>(batch, 1)) / step_s
                 : 0;
  perf.lower_bound_s = LowerBound(num_ipus);
  return perf;
}

DeviceModel::RemoteLoads DeviceModel::RemoteLoadsOf(
    absl::Span<const int32_t> ipu_of_node, int num_ipus) const {
  RemoteLoads r;
  r.weights.assign(num_ipus, {});
  r.bytes.assign(num_ipus, 0);
  r.load_s.assign(num_ipus, 0);
  r.unfolded_s.assign(num_ipus, 0);
  const ShardingProblem& p = problem_;
  if (p.weight_loaded_bytes.empty()) return r;
  for (int32_t node = 0; node < p.num_nodes(); ++node) {
    if (p.is_constant[node]) continue;
    for (int32_t w : p.node_weights[node])
      if (p.weight_loaded_bytes[w] > 0)
        r.weights[ipu_of_node[node]].push_back(w);
  }
  for (int d = 0; d < num_ipus; ++d) {
    std::vector<int32_t>& ws = r.weights[d];
    std::sort(ws.begin(), ws.end());
    ws.erase(std::unique(ws.begin(), ws.end()), ws.end());
    for (int32_t w : ws) {
      r.bytes[d] = SaturatingAdd(r.bytes[d], p.weight_loaded_bytes[w]);
      const double s = static_cast<size_t>(w) < p.weight_load_s.size()
                           ? p.weight_load_s[w]
                           : 0;
      r.load_s[d] += s;
      const int32_t charged = static_cast<size_t>(w) < load_charged_to_.size()
                                  ? load_charged_to_[w]
                                  : -1;
      if (charged < 0 || ipu_of_node[charged] != d) r.unfolded_s[d] += s;
    }
  }
  return r;
}

void DeviceModel::AddRemoteLoads(absl::Span<const int32_t> ipu_of_node,
                                 std::vector<double>* stage_time_s) const {
  if (problem_.weight_loaded_bytes.empty()) return;
  const int num_ipus = static_cast<int>(stage_time_s->size());
  const RemoteLoads r = RemoteLoadsOf(ipu_of_node, num_ipus);
  for (int d = 0; d < num_ipus; ++d) {
    double& t = (*stage_time_s)[d];
    t = profile_.remote_loads_overlap_compute() ? std::max(t, r.load_s[d])
                                                : t + r.unfolded_s[d];
  }
}

double DeviceModel::LowerBound(int num_ipus) const {
  const int64_t n = static_cast<int64_t>(descending_prefix_s_.size()) - 1;
  if (num_ipus < 1 || n <= 0) return 0;
  // Σ of the descending times t[i..j] (0-based, inclusive).
  auto sum = [&](int64_t i, int64_t j) {
    return descending_prefix_s_[j + 1] - descending_prefix_s_[i];
  };
  double bound = sum(0, n - 1) / num_ipus;
  // Pigeonhole: of the j*k+1 costliest nodes some IPU runs j+1, so at least
  // the j+1 cheapest of them, t[j*k-j] + ... + t[j*k] (j = 0: the costliest).
  for (int64_t j = 0; j * num_ipus < n; ++j) {
    bound = std::max(bound, sum(j * num_ipus - j, j * num_ipus));
  }
  return bound;
}

std::string DeviceModel::OutOfMemoryMessage(int32_t ipu,
                                            const IpuMemory& memory) const {
  if (PlainMemory()) {
    return absl::StrCat(
        "Out of memory on IPU ", ipu, ": ", memory.max_tile_bytes,
        " bytes used but it has ",
        SaturatingMul(int64_t{profile_.tiles_per_ipu()},
                      profile_.bytes_per_tile()),
        " (plain bytes: weights",
        profile_.memory_model() ==
                proto::MEMORY_MODEL_PLAIN_WEIGHTS_AND_ACTIVATIONS
            ? ", code and activations)"
            : " and code)");
  }
  const int64_t global_tile =
      static_cast<int64_t>(ipu) * profile_.tiles_per_ipu() + memory.max_tile;
  return absl::StrCat("Out of memory on tile ", global_tile, ": ",
                      memory.max_tile_bytes, " bytes used but tiles only have ",
                      profile_.bytes_per_tile(), " bytes of memory (IPU ", ipu,
                      " tile ", memory.max_tile, ")");
}

}  // namespace autoshard
