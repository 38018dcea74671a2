#include "solver/strategies/search_strategy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "costmodel/device_model.h"
#include "costmodel/device_models.h"
#include "costmodel/plan_evaluation.h"

namespace autoshard {
namespace {

constexpr int kKeptBalanced = 5;  // PopRT keeps the 5 most FLOPs-balanced

// One split: the group of every subgraph and what the models say of it.
struct Split {
  std::vector<int32_t> group;     // per subgraph
  std::vector<IpuMemory> memory;  // per group
  std::vector<double> time_s;     // per group: compute time (Σ NodeTime)
  std::vector<int32_t> members;   // subgraphs per group (counts)
  uint64_t key = 0;               // Zobrist hash of `group`
  int64_t max_tile_bytes = 0;     // the fullest tile of any group
  bool fits = false;
  int32_t oracle_group = -1;   // the compiler's overflowing IPU, if known
  std::string oracle_message;  // the compiler's failure without a tile
};

// How unevenly compute time is spread: the standard deviation over groups.
double TimeStdDev(const Split& s) {
  double mean = 0, var = 0;
  for (double t : s.time_s) mean += t;
  mean /= static_cast<double>(s.time_s.size());
  for (double t : s.time_s) var += (t - mean) * (t - mean);
  return std::sqrt(var / static_cast<double>(s.time_s.size()));
}

class Searcher {
 public:
  Searcher(const ShardingProblem& problem, const SubgraphSet& subgraphs,
           int num_ipus, const DeviceModel& model)
      : problem_(problem),
        subgraphs_(subgraphs),
        k_(num_ipus),
        model_(model),
        ipu_of_node_(problem.num_nodes(), 0),
        step_scratch_(problem.num_nodes(), -1),
        schedules_(num_ipus),
        subgraph_time_s_(subgraphs.size(), 0) {
    for (int32_t s = 0; s < subgraphs.size(); ++s) {
      for (int32_t node : subgraphs.subgraphs()[s].nodes) {
        subgraph_time_s_[s] += model.NodeTime(node);
      }
    }
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

  uint64_t Z(int32_t s, int32_t g) const {
    return zobrist_[static_cast<size_t>(s) * k_ + g];
  }

  // A fully evaluated split from a group-per-subgraph vector.
  Split Make(std::vector<int32_t> group) {
    Split split;
    split.group = std::move(group);
    split.time_s.assign(k_, 0);
    split.members.assign(k_, 0);
    for (int32_t s = 0; s < subgraphs_.size(); ++s) {
      split.key ^= Z(s, split.group[s]);
      split.time_s[split.group[s]] += subgraph_time_s_[s];
      ++split.members[split.group[s]];
    }
    Load(split);
    split.memory.resize(k_);
    for (int32_t g = 0; g < k_; ++g)
      split.memory[g] = Evaluate(g, schedules_[g]);
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
    next.time_s = split.time_s;
    next.members = split.members;
    next.key = split.key ^ Z(s, from) ^ Z(s, to);
    next.time_s[from] -= subgraph_time_s_[s];
    next.time_s[to] += subgraph_time_s_[s];
    --next.members[from];
    ++next.members[to];
    for (int32_t node : sub.nodes) ipu_of_node_[node] = to;
    std::vector<int32_t> from_schedule, to_schedule;
    for (int32_t node : schedules_[from]) {
      if (subgraphs_.subgraph_of_node(node) != s) from_schedule.push_back(node);
    }
    std::merge(schedules_[to].begin(), schedules_[to].end(), sub.nodes.begin(),
               sub.nodes.end(), std::back_inserter(to_schedule),
               [&](int32_t a, int32_t b) {
                 return problem_.topo_position[a] < problem_.topo_position[b];
               });
    next.memory[from] = Evaluate(from, from_schedule);
    next.memory[to] = Evaluate(to, to_schedule);
    for (int32_t node : sub.nodes)
      ipu_of_node_[node] = from;  // back to the loaded split
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
  std::vector<std::pair<int32_t, int32_t>> FitMoves(const Split& split,
                                                    int32_t g) const {
    std::vector<std::pair<int32_t, int32_t>> moves;  // (subgraph, to)
    if (split.members[g] <= 1) return moves;
    for (int32_t s = 0; s < subgraphs_.size(); ++s) {
      if (split.group[s] != g) continue;
      const Subgraph& sub = subgraphs_.subgraphs()[s];
      auto [lo, hi] = Range(split, s);
      std::vector<int32_t> targets;
      if (hi > g)
        targets.push_back(sub.kids.empty() ? g + 1 : hi);  // next consumer
      if (lo < g)
        targets.push_back(sub.parents.empty() ? g - 1 : lo);  // previous feeder
      int32_t lightest = -1;  // the least-loaded group it may join (parallel)
      for (int32_t t = lo; t <= hi; ++t) {
        if (t == g) continue;
        if (lightest < 0 || split.memory[t].max_tile_bytes <
                                split.memory[lightest].max_tile_bytes) {
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

  // Moves off the slowest group `g` that reduce the compute-time gap to the
  // target (PopRT's FLOPs-balance test with time, FLOPs weighted by each op
  // class's efficiency, and without its sign error: the moved work leaves g).
  std::vector<std::pair<int32_t, int32_t>> BalanceMoves(const Split& split,
                                                        int32_t g) const {
    std::vector<std::pair<int32_t, int32_t>> moves;
    if (split.members[g] <= 1) return moves;
    for (int32_t s = 0; s < subgraphs_.size(); ++s) {
      if (split.group[s] != g) continue;
      const double f = subgraph_time_s_[s];
      auto [lo, hi] = Range(split, s);
      for (int32_t t = lo; t <= hi; ++t) {
        if (t == g || split.time_s[t] >= split.time_s[g]) continue;
        if (std::abs((split.time_s[g] - f) - (split.time_s[t] + f)) <
            std::abs(split.time_s[g] - split.time_s[t])) {
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
  std::vector<int32_t> ipu_of_node_;  // of the loaded split
  std::vector<int32_t> step_scratch_;
  std::vector<std::vector<int32_t>> schedules_;  // of the loaded split
  std::vector<uint64_t> zobrist_;
  std::vector<double> subgraph_time_s_;
};

// The overflowing groups, the fullest tile first (ties: lower index first).
std::vector<int32_t> OverflowingGroups(const Split& split) {
  std::vector<int32_t> groups;
  for (int32_t g = 0; g < static_cast<int32_t>(split.memory.size()); ++g) {
    if (!split.memory[g].fits) groups.push_back(g);
  }
  std::stable_sort(groups.begin(), groups.end(), [&](int32_t a, int32_t b) {
    return split.memory[a].max_tile_bytes > split.memory[b].max_tile_bytes;
  });
  return groups;
}

int32_t CostliestGroup(const Split& split) {
  return static_cast<int32_t>(
      std::max_element(split.time_s.begin(), split.time_s.end()) -
      split.time_s.begin());
}

}  // namespace

absl::StatusOr<std::optional<LowerProportionFit>> FitWithLowerProportion(
    const DeviceModels& models, const std::vector<int32_t>& ipu_of_node,
    int num_ipus, const SearchOracle& oracle) {
  for (double amp : {0.3, 0.1}) {
    if (amp >= models.profile().available_memory_proportion()) continue;
    const PlanEvaluation e =
        EvaluatePlan(models.At(amp), ipu_of_node, num_ipus, /*batch=*/1);
    bool fits = e.fits;
    int64_t fullest = e.max_tile_bytes;
    if (oracle) {
      ASSIGN_OR_RETURN(std::vector<OracleVerdict> verdicts,
                       oracle({ipu_of_node}, amp));
      fits = verdicts[0].fits;
      if (!fits) fullest = verdicts[0].bytes;
    }
    if (fits) return LowerProportionFit{amp, fullest};
  }
  return std::nullopt;
}

namespace {

// The start split must cover every subgraph, use every IPU and be monotone
// (no subgraph feeds one on an earlier IPU).
absl::Status CheckStart(const SubgraphSet& subgraphs,
                        const std::vector<int32_t>& start_groups, int num_ipus,
                        const SearchOptions& options) {
  if (options.max_candidates <= 0 || !(options.max_seconds > 0)) {
    return absl::InvalidArgumentError(
        "--max-candidates and the time limit must be positive");
  }
  if (static_cast<int>(start_groups.size()) != subgraphs.size()) {
    return absl::InvalidArgumentError(
        "the start split does not cover every subgraph");
  }
  std::vector<bool> used(num_ipus, false);
  for (int32_t g : start_groups) {
    if (g < 0 || g >= num_ipus)
      return absl::InvalidArgumentError("start group out of range");
    used[g] = true;
  }
  if (std::find(used.begin(), used.end(), false) != used.end()) {
    return absl::InvalidArgumentError("the start split leaves an IPU empty");
  }
  for (int32_t s = 0; s < subgraphs.size(); ++s) {
    for (int32_t parent : subgraphs.subgraphs()[s].parents) {
      if (start_groups[parent] > start_groups[s]) {
        return absl::InvalidArgumentError(
            absl::StrCat("the start split is not monotone: subgraph ", parent,
                         " on IPU ", start_groups[parent], " feeds subgraph ",
                         s, " on IPU ", start_groups[s]));
      }
    }
  }
  return absl::OkStatus();
}

// (from group, moves) pairs to try from one split.
using MovePlans =
    std::vector<std::pair<int32_t, std::vector<std::pair<int32_t, int32_t>>>>;

// One SearchStrategy call: the breadth-first search over splits (PopRT's),
// its queue and the best splits found so far.
class SplitSearch {
 public:
  SplitSearch(const DeviceModels& models, const SubgraphSet& subgraphs,
              int num_ipus, const SearchOptions& options)
      : problem_(models.problem()),
        num_ipus_(num_ipus),
        models_(models),
        device_(models.profile()),
        options_(options),
        start_time_(std::chrono::steady_clock::now()),
        model_(models.Get()),
        searcher_(problem_, subgraphs, num_ipus, model_) {
    result_.available_memory_proportion = device_.available_memory_proportion();
  }

  // Costs (and, with a compiler, compiles) the start split and queues it.
  absl::Status Start(std::vector<int32_t> start_groups) {
    Split start = searcher_.Make(std::move(start_groups));
    visited_ = {start.key};
    std::vector<Split> first = {std::move(start)};
    RETURN_IF_ERROR(Consult(&first));
    start = std::move(first[0]);
    result_.raw_max_tile_bytes = start.max_tile_bytes;
    closest_ = start;
    Judge(start);
    queue_.push_back(std::move(start));
    return absl::OkStatus();
  }

  // Expands queued splits until one fits (or, with optimal_perf, the
  // queue, the candidates or the time run out).
  absl::Status Run() {
    while (!done_ && !queue_.empty() && candidates_ < options_.max_candidates &&
           Elapsed() < options_.max_seconds && !Stalled()) {
      Split split = std::move(queue_.front());
      queue_.pop_front();
      ReportProgress();
      MovePlans plans;
      if (!MovesFrom(split, &plans)) continue;
      std::vector<Split> batch = NewSplits(split, plans);
      RETURN_IF_ERROR(Consult(&batch));
      for (Split& next : batch) {
        Judge(next);
        queue_.push_back(std::move(next));
        if (done_) break;
      }
    }
    return absl::OkStatus();
  }

  // The best fitting split, else the closest (retried at lower memory
  // proportions when asked), with why the search stopped.
  absl::StatusOr<SearchResult> Finish() {
    result_.candidates = candidates_;
    result_.stop_reason = StopReason();
    const Split* chosen = best_fit_ ? &*best_fit_ : &closest_;
    result_.fits = best_fit_.has_value();
    int64_t fullest = chosen->max_tile_bytes;
    if (!result_.fits && options_.retry_lower_proportions) {
      ASSIGN_OR_RETURN(
          std::optional<LowerProportionFit> lower,
          FitWithLowerProportion(models_, searcher_.ToAssignment(closest_).ipu,
                                 num_ipus_, options_.oracle));
      if (lower) {
        result_.fits = true;
        result_.available_memory_proportion =
            lower->available_memory_proportion;
        // As costed with the proportion it fits with.
        fullest = lower->max_tile_bytes;
      }
    }
    result_.assignment = searcher_.ToAssignment(*chosen);
    if (!result_.fits) result_.compiler_message = chosen->oracle_message;
    result_.max_tile_bytes = fullest;
    if (options_.progress && Elapsed() >= 1.0) {
      options_.progress({candidates_, fullest, result_.fits, Elapsed()});
    }
    return result_;
  }

 private:
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start_time_)
        .count();
  }

  double Bottleneck(const Split& split) const {
    return model_
        .EvaluatePerformance(searcher_.ToAssignment(split).ipu, num_ipus_,
                             options_.batch)
        .bottleneck_s;
  }

  bool Stalled() const {
    return !best_fit_ &&
           candidates_ - closer_at_ >= options_.max_stall_candidates;
  }

  void ReportProgress() {
    if (options_.progress && Elapsed() - last_report_ >= 1.0) {
      last_report_ = Elapsed();
      options_.progress({candidates_, closest_.max_tile_bytes,
                         best_fit_.has_value(), last_report_});
    }
  }

  // Every split is judged the moment it is costed, so the candidate budget
  // never drops a split that fits.
  void Judge(const Split& split) {
    if (split.max_tile_bytes < closest_.max_tile_bytes) {
      closest_ = split;
      closer_at_ = candidates_;
    }
    if (!split.fits) return;
    const double b = Bottleneck(split);
    if (!best_fit_ || b < best_fit_s_) {
      best_fit_ = split;
      best_fit_s_ = b;
    }
    if (!options_.optimal_perf) done_ = true;  // the first split that fits
  }

  // With a compiler: its verdicts replace the model's fit and fullest tile.
  absl::Status Consult(std::vector<Split>* splits) const {
    if (!options_.oracle || splits->empty()) return absl::OkStatus();
    std::vector<std::vector<int32_t>> candidates;
    for (const Split& split : *splits)
      candidates.push_back(searcher_.ToAssignment(split).ipu);
    ASSIGN_OR_RETURN(
        std::vector<OracleVerdict> verdicts,
        options_.oracle(candidates, device_.available_memory_proportion()));
    for (size_t i = 0; i < splits->size(); ++i) {
      Split& split = (*splits)[i];
      const OracleVerdict& v = verdicts[i];
      split.fits = v.fits;
      split.max_tile_bytes = v.fits ? split.max_tile_bytes
                             : v.tile >= 0
                                 ? v.bytes
                                 : std::numeric_limits<int64_t>::max();
      split.oracle_group =
          v.tile >= 0 ? static_cast<int32_t>(v.tile / device_.tiles_per_ipu())
                      : -1;
      if (split.oracle_group >= num_ipus_) split.oracle_group = -1;
      split.oracle_message = v.message;
    }
    return absl::OkStatus();
  }

  // The moves to try from `split`; false when it is not expanded (PopRT: a
  // fitting split only when among the most balanced, a failing one only
  // when the closest so far).
  bool MovesFrom(const Split& split, MovePlans* plans) {
    if (split.fits) {
      const double dev = TimeStdDev(split);
      auto pos =
          std::find_if(balanced_.begin(), balanced_.end(),
                       [&](const Split& s) { return dev < TimeStdDev(s); });
      if (pos == balanced_.end() && balanced_.size() >= kKeptBalanced)
        return false;
      balanced_.insert(pos, split);
      if (balanced_.size() > kKeptBalanced) balanced_.pop_back();
      searcher_.Load(split);
      const int32_t slowest = CostliestGroup(split);
      plans->emplace_back(slowest, searcher_.BalanceMoves(split, slowest));
      return true;
    }
    if (split.max_tile_bytes > best_failure_) return false;
    best_failure_ = split.max_tile_bytes;
    searcher_.Load(split);
    std::vector<int32_t> groups = OverflowingGroups(split);
    if (split.oracle_group >= 0)
      groups = {split.oracle_group};  // the compiler's word
    for (int32_t g : groups)
      plans->emplace_back(g, searcher_.FitMoves(split, g));
    return true;
  }

  // The splits the moves make that were not seen before, within the
  // candidate budget.
  std::vector<Split> NewSplits(const Split& split, const MovePlans& plans) {
    std::vector<Split> batch;
    for (const auto& [from, moves] : plans) {
      for (auto [s, to] : moves) {
        if (candidates_ >= options_.max_candidates) break;
        const uint64_t key =
            split.key ^ searcher_.Z(s, from) ^ searcher_.Z(s, to);
        if (!visited_.insert(key).second) continue;
        ++candidates_;
        batch.push_back(searcher_.Move(split, s, from, to));
      }
    }
    return batch;
  }

  std::string StopReason() const {
    return done_                                    ? "a split fits"
           : queue_.empty()                         ? "no move left"
           : candidates_ >= options_.max_candidates ? "candidate limit"
           : Stalled()
               ? absl::StrCat("no closer split in ",
                              options_.max_stall_candidates, " candidates")
               : "time limit";
  }

  const ShardingProblem& problem_;
  const int num_ipus_;
  const DeviceModels& models_;
  const proto::DeviceProfile& device_;
  const SearchOptions& options_;
  const std::chrono::steady_clock::time_point start_time_;
  const DeviceModel& model_;
  Searcher searcher_;
  SearchResult result_;
  int64_t candidates_ = 1;
  absl::flat_hash_set<uint64_t> visited_;
  std::deque<Split> queue_;
  Split closest_;                  // the split with the smallest fullest tile
  std::optional<Split> best_fit_;  // the fitting split, best bottleneck
  double best_fit_s_ = std::numeric_limits<double>::infinity();
  int64_t best_failure_ = std::numeric_limits<int64_t>::max();
  std::vector<Split> balanced_;  // PopRT's 5 most balanced fitting splits
  double last_report_ = 0;
  bool done_ = false;
  int64_t closer_at_ = 1;  // candidates when the closest split was found
};

}  // namespace

absl::StatusOr<SearchResult> SearchStrategy(const ShardingProblem& problem,
                                            const SubgraphSet& subgraphs,
                                            std::vector<int32_t> start_groups,
                                            int num_ipus,
                                            const proto::DeviceProfile& device,
                                            Precision precision,
                                            const SearchOptions& options) {
  const DeviceModels models(problem, device, precision);
  return SearchStrategy(models, subgraphs, std::move(start_groups), num_ipus,
                        options);
}

absl::StatusOr<SearchResult> SearchStrategy(const DeviceModels& models,
                                            const SubgraphSet& subgraphs,
                                            std::vector<int32_t> start_groups,
                                            int num_ipus,
                                            const SearchOptions& options) {
  RETURN_IF_ERROR(CheckStart(subgraphs, start_groups, num_ipus, options));
  SplitSearch search(models, subgraphs, num_ipus, options);
  RETURN_IF_ERROR(search.Start(std::move(start_groups)));
  RETURN_IF_ERROR(search.Run());
  return search.Finish();
}

}  // namespace autoshard
