#include "sharder/search_strategy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "costmodel/device_model.h"

namespace autoshard {
namespace {

constexpr int kKeptBalanced = 5;  // PopRT keeps the 5 most FLOPs-balanced

// One split: the group of every subgraph and what the models say of it.
struct Split {
  std::vector<int32_t> group;      // per subgraph
  std::vector<IpuMemory> memory;   // per group
  std::vector<double> flops;       // per group
  std::vector<int32_t> members;    // subgraphs per group (counts)
  uint64_t key = 0;                // Zobrist hash of `group`
  int64_t max_tile_bytes = 0;      // the fullest tile of any group
  bool fits = false;
};

double FlopsStdDev(const Split& s) {
  double mean = 0, var = 0;
  for (double f : s.flops) mean += f;
  mean /= static_cast<double>(s.flops.size());
  for (double f : s.flops) var += (f - mean) * (f - mean);
  return std::sqrt(var / static_cast<double>(s.flops.size()));
}

class Searcher {
 public:
  Searcher(const ShardingProblem& problem, const SubgraphSet& subgraphs, int num_ipus,
           const DeviceModel& model)
      : problem_(problem),
        subgraphs_(subgraphs),
        k_(num_ipus),
        model_(model),
        ipu_of_node_(problem.num_nodes(), 0),
        step_scratch_(problem.num_nodes(), -1),
        schedules_(num_ipus) {
    // Zobrist keys from a fixed splitmix64 stream: deterministic runs.
    uint64_t state = 0x9e3779b97f4a7c15ULL;
    zobrist_.resize(static_cast<size_t>(subgraphs.size()) * k_);
    for (uint64_t& z : zobrist_) {
      uint64_t x = (state += 0x9e3779b97f4a7c15ULL);
      x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
      x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
      z = x ^ (x >> 31);
    }
  }

  uint64_t Z(int32_t s, int32_t g) const { return zobrist_[static_cast<size_t>(s) * k_ + g]; }

  // A fully evaluated split from a group-per-subgraph vector.
  Split Make(std::vector<int32_t> group) {
    Split split;
    split.group = std::move(group);
    split.flops.assign(k_, 0);
    split.members.assign(k_, 0);
    for (int32_t s = 0; s < subgraphs_.size(); ++s) {
      split.key ^= Z(s, split.group[s]);
      split.flops[split.group[s]] += subgraphs_.subgraphs()[s].flops;
      ++split.members[split.group[s]];
    }
    Load(split);
    split.memory.resize(k_);
    for (int32_t g = 0; g < k_; ++g) split.memory[g] = Evaluate(g, schedules_[g]);
    Summarize(&split);
    return split;
  }

  // Makes `split` the working split: node IPUs and per-group schedules.
  void Load(const Split& split) {
    for (auto& s : schedules_) s.clear();
    for (int32_t node : problem_.topo_order) {
      const int32_t g = split.group[subgraphs_.subgraph_of_node(node)];
      ipu_of_node_[node] = g;
      schedules_[g].push_back(node);
    }
  }

  // The loaded split with subgraph `s` moved from `from` to `to`.
  Split Move(const Split& split, int32_t s, int32_t from, int32_t to) {
    const Subgraph& sub = subgraphs_.subgraphs()[s];
    Split next;
    next.group = split.group;
    next.group[s] = to;
    next.memory = split.memory;
    next.flops = split.flops;
    next.members = split.members;
    next.key = split.key ^ Z(s, from) ^ Z(s, to);
    next.flops[from] -= sub.flops;
    next.flops[to] += sub.flops;
    --next.members[from];
    ++next.members[to];
    for (int32_t node : sub.nodes) ipu_of_node_[node] = to;
    std::vector<int32_t> from_schedule, to_schedule;
    for (int32_t node : schedules_[from]) {
      if (subgraphs_.subgraph_of_node(node) != s) from_schedule.push_back(node);
    }
    std::merge(schedules_[to].begin(), schedules_[to].end(), sub.nodes.begin(), sub.nodes.end(),
               std::back_inserter(to_schedule), [&](int32_t a, int32_t b) {
                 return problem_.topo_position[a] < problem_.topo_position[b];
               });
    next.memory[from] = Evaluate(from, from_schedule);
    next.memory[to] = Evaluate(to, to_schedule);
    for (int32_t node : sub.nodes) ipu_of_node_[node] = from;  // back to the loaded split
    Summarize(&next);
    return next;
  }

  // Moves of `s` (in group `g` of the loaded split) that keep the plan
  // monotone: any group in [max parent group, min kid group] but g.
  std::pair<int32_t, int32_t> Range(const Split& split, int32_t s) const {
    const Subgraph& sub = subgraphs_.subgraphs()[s];
    int32_t lo = 0, hi = k_ - 1;
    for (int32_t p : sub.parents) lo = std::max(lo, split.group[p]);
    for (int32_t c : sub.kids) hi = std::min(hi, split.group[c]);
    return {lo, hi};
  }

  // PopRT's neighbours of an overflowing group `g` (see the header).
  std::vector<std::pair<int32_t, int32_t>> FitMoves(const Split& split, int32_t g) const {
    std::vector<std::pair<int32_t, int32_t>> moves;  // (subgraph, to)
    if (split.members[g] <= 1) return moves;
    for (int32_t s = 0; s < subgraphs_.size(); ++s) {
      if (split.group[s] != g) continue;
      const Subgraph& sub = subgraphs_.subgraphs()[s];
      auto [lo, hi] = Range(split, s);
      std::vector<int32_t> targets;
      if (hi > g) targets.push_back(sub.kids.empty() ? g + 1 : hi);  // next consumer
      if (lo < g) targets.push_back(sub.parents.empty() ? g - 1 : lo);  // previous feeder
      int32_t lightest = -1;  // the least-loaded group it may join (parallel)
      for (int32_t t = lo; t <= hi; ++t) {
        if (t == g) continue;
        if (lightest < 0 || split.memory[t].max_tile_bytes < split.memory[lightest].max_tile_bytes) {
          lightest = t;
        }
      }
      if (lightest >= 0) targets.push_back(lightest);
      std::sort(targets.begin(), targets.end());
      targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
      for (int32_t t : targets) moves.emplace_back(s, t);
    }
    return moves;
  }

  // Moves off the costliest group `g` that reduce the FLOPs gap to the target
  // (PopRT's balance test, without its sign error: the moved FLOPs leave g).
  std::vector<std::pair<int32_t, int32_t>> BalanceMoves(const Split& split, int32_t g) const {
    std::vector<std::pair<int32_t, int32_t>> moves;
    if (split.members[g] <= 1) return moves;
    for (int32_t s = 0; s < subgraphs_.size(); ++s) {
      if (split.group[s] != g) continue;
      const double f = subgraphs_.subgraphs()[s].flops;
      auto [lo, hi] = Range(split, s);
      for (int32_t t = lo; t <= hi; ++t) {
        if (t == g || split.flops[t] >= split.flops[g]) continue;
        if (std::abs((split.flops[g] - f) - (split.flops[t] + f)) <
            std::abs(split.flops[g] - split.flops[t])) {
          moves.emplace_back(s, t);
        }
      }
    }
    return moves;
  }

  Assignment ToAssignment(const Split& split) const {
    Assignment a;
    a.ipu.resize(problem_.num_nodes());
    for (int32_t node = 0; node < problem_.num_nodes(); ++node) {
      a.ipu[node] = split.group[subgraphs_.subgraph_of_node(node)];
    }
    a.pipeline_stage = a.ipu;
    return a;
  }

 private:
  IpuMemory Evaluate(int32_t g, const std::vector<int32_t>& schedule) {
    return model_.EvaluateSchedule(ipu_of_node_, g, schedule, &step_scratch_);
  }

  void Summarize(Split* split) const {
    split->fits = true;
    split->max_tile_bytes = 0;
    for (const IpuMemory& m : split->memory) {
      split->fits &= m.fits;
      split->max_tile_bytes = std::max(split->max_tile_bytes, m.max_tile_bytes);
    }
  }

  const ShardingProblem& problem_;
  const SubgraphSet& subgraphs_;
  const int32_t k_;
  const DeviceModel& model_;
  std::vector<int32_t> ipu_of_node_;   // of the loaded split
  std::vector<int32_t> step_scratch_;
  std::vector<std::vector<int32_t>> schedules_;  // of the loaded split
  std::vector<uint64_t> zobrist_;
};

// The overflowing group with the fullest tile.
int32_t WorstGroup(const Split& split) {
  int32_t worst = -1;
  for (int32_t g = 0; g < static_cast<int32_t>(split.memory.size()); ++g) {
    if (split.memory[g].fits) continue;
    if (worst < 0 || split.memory[g].max_tile_bytes > split.memory[worst].max_tile_bytes) {
      worst = g;
    }
  }
  return worst;
}

int32_t CostliestGroup(const Split& split) {
  return static_cast<int32_t>(std::max_element(split.flops.begin(), split.flops.end()) -
                              split.flops.begin());
}

}  // namespace

absl::StatusOr<SearchResult> SearchStrategy(const ShardingProblem& problem,
                                            const SubgraphSet& subgraphs,
                                            std::vector<int32_t> start_groups, int num_ipus,
                                            const proto::DeviceProfile& device,
                                            Precision precision, const SearchOptions& options) {
  if (options.max_candidates <= 0) {
    return absl::InvalidArgumentError("--max-candidates must be positive");
  }
  if (static_cast<int>(start_groups.size()) != subgraphs.size()) {
    return absl::InvalidArgumentError("the start split does not cover every subgraph");
  }
  std::vector<bool> used(num_ipus, false);
  for (int32_t g : start_groups) {
    if (g < 0 || g >= num_ipus) return absl::InvalidArgumentError("start group out of range");
    used[g] = true;
  }
  if (std::find(used.begin(), used.end(), false) != used.end()) {
    return absl::InvalidArgumentError("the start split leaves an IPU empty");
  }
  const auto start_time = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  };
  DeviceModel model(problem, device, precision);
  Searcher searcher(problem, subgraphs, num_ipus, model);

  SearchResult result;
  result.available_memory_proportion = device.available_memory_proportion();
  Split start = searcher.Make(std::move(start_groups));
  result.raw_max_tile_bytes = start.max_tile_bytes;
  int64_t candidates = 1;
  absl::flat_hash_set<uint64_t> visited = {start.key};
  std::deque<Split> queue;
  Split closest = start;
  int64_t best_failure = std::numeric_limits<int64_t>::max();
  std::vector<Split> balanced;  // fitting splits, most balanced first
  double last_report = 0;
  queue.push_back(std::move(start));

  while (!queue.empty() && candidates < options.max_candidates) {
    Split split = std::move(queue.front());
    queue.pop_front();
    if (options.progress && elapsed() - last_report >= 1.0) {
      last_report = elapsed();
      options.progress({candidates, closest.max_tile_bytes, !balanced.empty(), last_report});
    }
    std::vector<std::pair<int32_t, int32_t>> moves;
    int32_t from = 0;
    if (split.fits) {
      if (!options.optimal_perf) {
        closest = std::move(split);
        balanced.push_back(closest);
        break;
      }
      // Keep the kKeptBalanced most balanced; improve only the ones kept.
      const double dev = FlopsStdDev(split);
      auto pos = std::find_if(balanced.begin(), balanced.end(),
                              [&](const Split& s) { return dev < FlopsStdDev(s); });
      if (pos == balanced.end() && balanced.size() >= kKeptBalanced) continue;
      pos = balanced.insert(pos, split);
      if (balanced.size() > kKeptBalanced) balanced.pop_back();
      from = CostliestGroup(split);
      searcher.Load(split);
      moves = searcher.BalanceMoves(split, from);
    } else {
      if (split.max_tile_bytes < closest.max_tile_bytes) closest = split;
      if (split.max_tile_bytes > best_failure) continue;  // PopRT: expand the closest only
      best_failure = split.max_tile_bytes;
      from = WorstGroup(split);
      searcher.Load(split);
      moves = searcher.FitMoves(split, from);
    }
    for (auto [s, to] : moves) {
      if (candidates >= options.max_candidates) break;
      const uint64_t key = split.key ^ searcher.Z(s, from) ^ searcher.Z(s, to);
      if (!visited.insert(key).second) continue;
      ++candidates;
      queue.push_back(searcher.Move(split, s, from, to));
    }
  }
  result.candidates = candidates;

  const Split* chosen = &closest;
  if (!balanced.empty()) {
    // The best estimated bottleneck among the kept fitting splits.
    double best = std::numeric_limits<double>::infinity();
    for (const Split& s : balanced) {
      const double b =
          model.EvaluatePerformance(searcher.ToAssignment(s).ipu, num_ipus, options.batch)
              .bottleneck_s;
      if (b < best) {
        best = b;
        chosen = &s;
      }
    }
    result.fits = true;
  } else {
    // Nothing fits: the closest split with less memory for temporaries.
    for (double amp : {0.3, 0.1}) {
      if (amp >= device.available_memory_proportion()) continue;
      proto::DeviceProfile lower = device;
      lower.set_available_memory_proportion(amp);
      DeviceModel lower_model(problem, lower, precision);
      const Assignment a = searcher.ToAssignment(closest);
      bool fits = true;
      for (int32_t g = 0; g < num_ipus; ++g) fits &= lower_model.EvaluateMemory(a.ipu, g).fits;
      if (fits) {
        result.fits = true;
        result.available_memory_proportion = amp;
        break;
      }
    }
  }
  result.assignment = searcher.ToAssignment(*chosen);
  result.max_tile_bytes = chosen->max_tile_bytes;
  for (int32_t g = 0; g < num_ipus; ++g) {
    if (chosen->memory[g].max_tile_bytes == chosen->max_tile_bytes) {
      result.max_tile_ipu = g;
      break;
    }
  }
  if (options.progress && elapsed() >= 1.0) {
    options.progress({candidates, chosen->max_tile_bytes, result.fits, elapsed()});
  }
  return result;
}

}  // namespace autoshard
