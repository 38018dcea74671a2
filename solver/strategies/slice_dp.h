// The DP of Note [Slicing DP] (optimal_strategy.h) as a class, for the
// optimal strategy and the slicing whose last stage returns to IPU 0
// (revisit.h). Internal to solver/strategies/.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_SLICE_DP_H_
#define AUTOSHARD_SOLVER_STRATEGIES_SLICE_DP_H_

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "costmodel/device_model.h"
#include "costmodel/problem.h"
#include "solver/strategies/optimal_strategy.h"

namespace autoshard::internal {

inline constexpr double kSliceInf = std::numeric_limits<double>::infinity();

// One run of the DP of Note [Slicing DP] over a fixed order.
class SliceDp {
 public:
  SliceDp(const ShardingProblem& problem, const DeviceModel& model,
          const SliceOrder& order, int num_ipus,
          std::chrono::steady_clock::time_point deadline,
          int64_t max_fit_evaluations)
      : max_fit_evaluations_(max_fit_evaluations),
        problem_(problem),
        model_(model),
        order_(order),
        k_(num_ipus),
        m_(static_cast<int32_t>(order.units.size())),
        end_(m_),
        deadline_(deadline) {
    const int n = problem.num_nodes();
    std::vector<int32_t>& unit_of_node = unit_of_node_;
    unit_of_node.assign(n, -1);
    for (int32_t u = 0; u < m_; ++u) {
      for (int32_t node : order.units[u]) unit_of_node[node] = u;
    }
    prefix_s_.assign(m_ + 1, 0);
    for (int32_t u = 0; u < m_; ++u) {
      double t = 0;
      for (int32_t node : order.units[u]) t += model.NodeTime(node);
      prefix_s_[u + 1] = prefix_s_[u] + t;
    }
    // C[x]: bytes of the tensors produced before unit x and read at or after
    // it, as a difference array over [p + 1, q] per tensor.
    std::vector<double> diff(m_ + 2, 0);  // in double: no overflow
    for (int32_t node = 0; node < n; ++node) {
      const int32_t p = unit_of_node[node];
      for (size_t slot = 0; slot < problem.output_bytes[node].size(); ++slot) {
        int32_t q = p;
        for (int32_t c : problem.output_consumers[node][slot])
          q = std::max(q, unit_of_node[c]);
        if (q <= p) continue;
        const int64_t bytes = problem.output_bytes[node][slot];
        diff[p + 1] += static_cast<double>(bytes);
        diff[q + 1] -= static_cast<double>(bytes);
      }
    }
    boundary_bytes_.assign(m_ + 1, 0);
    double running = 0;
    for (int32_t x = 0; x <= m_; ++x) {
      running += diff[x];
      boundary_bytes_[x] = std::max(running, 0.0);
    }
    capacity_bytes_ = static_cast<double>(model.profile().tiles_per_ipu()) *
                      static_cast<double>(model.profile().bytes_per_tile());
    ipu_scratch_.assign(n, 1);
    step_scratch_.assign(n, -1);
    weight_stamp_.assign(problem.weight_size_bytes.size(), -1);
  }

  // Unit of each node (-1: in no unit).
  const std::vector<int32_t>& unit_of_node() const { return unit_of_node_; }
  // Σ node times of units [0, x).
  double Prefix(int32_t x) const { return prefix_s_[x]; }
  int32_t units() const { return m_; }

  // Cuts the next Solve may not make: a slice boundary at unit position x
  // (0 < x < the end) with forbidden[x] != 0 (empty: none), and the first
  // slice ending before `min_first_cut`. For --weights variable: a weight's
  // readers on one IPU (Note [Last stage on IPU 0], revisit.h).
  void SetForbiddenCuts(std::vector<uint8_t> forbidden, int32_t min_first_cut) {
    forbidden_cut_ = std::move(forbidden);
    min_first_cut_ = min_first_cut;
  }

  // Makes units [tail_start, m) a last stage on the first slice's IPU: the
  // next Solve slices units [0, tail_start) over the k IPUs, with the first
  // slice's time increased by the tail's (its compute and the copies it
  // receives) and its memory costed with the tail's nodes (Note [Last stage
  // on IPU 0]). tail_start = m: no tail.
  void SetTail(int32_t tail_start) {
    end_ = tail_start;
    tail_nodes_.clear();
    tail_s_ = 0;
    first_fit_memo_.clear();
    if (tail_start >= m_) return;
    for (int32_t u = tail_start; u < m_; ++u) {
      tail_nodes_.insert(tail_nodes_.end(), order_.units[u].begin(),
                         order_.units[u].end());
    }
    tail_s_ = prefix_s_[m_] - prefix_s_[tail_start] +
              model_.CopySeconds(boundary_bytes_[tail_start]);
  }

  // Seconds of the stage that runs units [a, b) (with the tail's when a is
  // 0 and SetTail gave one).
  double Time(int32_t a, int32_t b) const {
    return prefix_s_[b] - prefix_s_[a] +
           model_.CopySeconds(boundary_bytes_[a]) +
           model_.CopySeconds(boundary_bytes_[b]) + (a == 0 ? tail_s_ : 0);
  }

  // Whether units [a, b) fit one IPU (remembered). Past the budget of
  // evaluations, answers "no" and marks the DP incomplete.
  bool Fits(int32_t a, int32_t b) {
    const bool with_tail = a == 0 && !tail_nodes_.empty();
    const int64_t key = static_cast<int64_t>(a) * (m_ + 1) + b;
    auto& memo = with_tail ? first_fit_memo_ : fit_memo_;
    auto it = memo.find(key);
    if (it != memo.end()) return it->second;
    if (fit_evaluations_ >= max_fit_evaluations_) {
      complete_ = false;
      return false;
    }
    schedule_.clear();
    for (int32_t u = a; u < b; ++u) {
      schedule_.insert(schedule_.end(), order_.units[u].begin(),
                       order_.units[u].end());
    }
    if (with_tail)
      schedule_.insert(schedule_.end(), tail_nodes_.begin(), tail_nodes_.end());
    // The plan costs an IPU with its nodes in the graph's topological order
    // (DeviceModel::EvaluateMemory); liveness depends on it, so the same.
    std::sort(schedule_.begin(), schedule_.end(), [&](int32_t x, int32_t y) {
      return problem_.topo_position[x] < problem_.topo_position[y];
    });
    for (int32_t node : schedule_) ipu_scratch_[node] = 0;
    const IpuMemory memory =
        model_.EvaluateSchedule(ipu_scratch_, 0, schedule_, &step_scratch_);
    for (int32_t node : schedule_) ipu_scratch_[node] = 1;
    ++fit_evaluations_;
    memo.emplace(key, memory.fits);
    return memory.fits;
  }

  // The whole DP: rounds with a growing cap on stage times. With
  // `max_cap_s` finite, one round with that cap: the optimum when it is at
  // most max_cap_s, else found = false (for a caller that only wants a
  // slicing faster than one it has: the rounds below it are skipped).
  SliceResult Solve(bool ignore_memory, double max_cap_s = kSliceInf) {
    SliceResult result;
    if (k_ < 1 || k_ > end_) return result;
    if (max_cap_s < kSliceInf) {
      double next_cap = kSliceInf;
      const double value = Round(max_cap_s, ignore_memory, &next_cap);
      if (value <= max_cap_s) {
        result.found = true;
        result.bottleneck_s = value;
      }
      return Finish(std::move(result), ignore_memory);
    }
    double max_boundary = 0;
    for (double c : boundary_bytes_) max_boundary = std::max(max_boundary, c);
    // No stage time exceeds this, so a round with this cap skips nothing.
    const double cap_all =
        prefix_s_[end_] + tail_s_ + 2 * model_.CopySeconds(max_boundary);
    double max_unit_s = tail_s_;
    for (int32_t u = 0; u < end_; ++u)
      max_unit_s = std::max(max_unit_s, prefix_s_[u + 1] - prefix_s_[u]);
    double cap = std::max((prefix_s_[end_] + tail_s_) / k_, max_unit_s) * 1.05;
    if (!(cap > 0) || cap > cap_all) cap = cap_all;
    // Every stage time is 0 (only folded constants and no cut bytes): no cap.
    if (!(cap > 0)) cap = kSliceInf;
    while (true) {
      double next_cap = kSliceInf;
      const double value = Round(cap, ignore_memory, &next_cap);
      // Past the evaluation budget a found slicing fits but is not proven
      // the fastest; past the deadline the round did not finish.
      if (value <= cap) {
        result.found = true;
        result.bottleneck_s = value;
        break;
      }
      if (!complete_) break;
      if (cap >= cap_all || cap == kSliceInf) break;  // nothing was skipped
      cap = std::min(cap_all, std::max(cap * 1.25,
                                       next_cap == kSliceInf ? 0.0 : next_cap));
    }
    return Finish(std::move(result), ignore_memory);
  }

 private:
  // `result` with its completeness, cuts and fit filled in from the last
  // round.
  SliceResult Finish(SliceResult result, bool ignore_memory) {
    result.complete = complete_;
    if (result.found) {
      result.cuts.assign(k_ + 1, 0);
      int32_t b = end_;
      for (int j = k_; j >= 1; --j) {
        result.cuts[j] = b;
        b = arg_[Index(j, b)];
      }
      result.cuts[0] = 0;
      result.fits = true;
      if (ignore_memory) {
        for (int j = 0; j < k_; ++j)
          result.fits &= Fits(result.cuts[j], result.cuts[j + 1]);
      }
    }
    result.fit_evaluations = fit_evaluations_;
    return result;
  }

  size_t Index(int j, int32_t b) const {
    return static_cast<size_t>(j) * (m_ + 1) + b;
  }

  // One round with stage times capped at `cap`: the optimum if it is <= cap,
  // else kSliceInf; `next_cap` gets the smallest value skipped for the cap.
  double Round(double cap, bool ignore_memory, double* next_cap) {
    best_.assign(static_cast<size_t>(k_ + 1) * (m_ + 1), kSliceInf);
    arg_.assign(best_.size(), -1);
    best_[Index(0, 0)] = 0;
    const double total = prefix_s_[end_];
    std::vector<Candidate> candidates;
    std::vector<std::pair<double, int32_t>> values;  // (value, a)
    for (int32_t b = 1; b <= end_; ++b) {
      if ((b & 63) == 0 && std::chrono::steady_clock::now() > deadline_) {
        complete_ = false;
        return kSliceInf;
      }
      // IPUs j that can end at b: every IPU gets a unit, and no stage exceeds
      // the cap in compute time alone.
      int jmin = std::max(1, k_ - (end_ - b));
      int jmax = std::min(k_, b);
      if (cap < kSliceInf) {
        jmin = std::max(jmin, static_cast<int>(
                                  std::ceil(prefix_s_[b] / cap * (1 - 1e-12))));
        jmax = std::min(
            jmax, k_ - static_cast<int>(std::ceil((total - prefix_s_[b]) / cap *
                                                  (1 - 1e-12))));
      }
      // A cut SetForbiddenCuts rules out ends no slice but the last.
      if (b < end_ && !forbidden_cut_.empty() && forbidden_cut_[b]) continue;
      if (b < min_first_cut_ && jmin == 1) jmin = 2;
      if (jmin > jmax) continue;
      candidates.clear();
      const int64_t stamp = ++weight_stamp_count_;  // unique over rounds
      double placed_bytes = 0;  // weights and code: see the header
      for (int32_t a = b - 1; a >= 0; --a) {
        if (prefix_s_[b] - prefix_s_[a] > cap) {
          *next_cap = std::min(*next_cap, prefix_s_[b] - prefix_s_[a]);
          break;
        }
        if (!ignore_memory) {
          // The slice's weights and code are placed whatever else it holds,
          // and only grow as the slice does: past the IPU's memory, no
          // longer slice fits either.
          for (int32_t node : order_.units[a]) {
            placed_bytes += static_cast<double>(model_.CodeBytes(node));
            for (int32_t w : problem_.node_weights[node]) {
              if (weight_stamp_[w] == stamp) continue;
              weight_stamp_[w] = stamp;
              placed_bytes +=
                  static_cast<double>(problem_.weight_size_bytes[w]);
            }
          }
          if (placed_bytes > capacity_bytes_) break;
        }
        const double t = Time(a, b);
        if (t > cap) {
          *next_cap = std::min(*next_cap, t);
          continue;
        }
        candidates.push_back({a, t});
      }
      for (int j = jmin; j <= jmax; ++j) {
        if (ignore_memory) {
          // Every slice counts as fitting: the smallest value (on a tie the
          // smaller a), as the sort below would give, in one pass.
          SelectSmallest(j, b, candidates);
          continue;
        }
        values.clear();
        for (const Candidate& c : candidates) {
          const double before = best_[Index(j - 1, c.a)];
          if (before == kSliceInf) continue;
          values.emplace_back(std::max(before, c.time_s), c.a);
        }
        // Smallest value first; on a tie the longer slice (smaller a).
        std::sort(values.begin(), values.end());
        for (auto [value, a] : values) {
          if (ignore_memory || Fits(a, b)) {
            best_[Index(j, b)] = value;
            arg_[Index(j, b)] = a;
            break;
          }
        }
      }
    }
    return best_[Index(k_, end_)];
  }

  struct Candidate {
    int32_t a;
    double time_s;
  };

  // f[j][b] = min over the candidates a of max(f[j-1][a], time(a, b)),
  // ties to the smaller a; O(candidates).
  void SelectSmallest(int j, int32_t b, const std::vector<Candidate>& cands) {
    double best_value = kSliceInf;
    int32_t best_a = -1;
    for (const Candidate& c : cands) {
      const double before = best_[Index(j - 1, c.a)];
      if (before == kSliceInf) continue;
      const double value = std::max(before, c.time_s);
      if (value < best_value || (value == best_value && c.a < best_a)) {
        best_value = value;
        best_a = c.a;
      }
    }
    if (best_a < 0) return;
    best_[Index(j, b)] = best_value;
    arg_[Index(j, b)] = best_a;
  }

  const int64_t max_fit_evaluations_;
  const ShardingProblem& problem_;
  const DeviceModel& model_;
  const SliceOrder& order_;
  const int k_;
  const int32_t m_;
  int32_t end_;  // the DP slices units [0, end_): m_, or a tail's start
  const std::chrono::steady_clock::time_point deadline_;
  std::vector<double> prefix_s_;        // Σ unit times, m + 1 values
  std::vector<double> boundary_bytes_;  // C[x], m + 1 values
  double capacity_bytes_ = 0;           // tiles x bytes per tile
  std::vector<double> best_;            // f[j][b]
  std::vector<int32_t> arg_;            // the a that gave it
  absl::flat_hash_map<int64_t, bool> fit_memo_;
  // Fits(0, b) with the tail's nodes (cleared by SetTail).
  absl::flat_hash_map<int64_t, bool> first_fit_memo_;
  std::vector<int32_t> unit_of_node_;
  std::vector<int32_t> tail_nodes_;  // units [end_, m_)'s nodes
  double tail_s_ = 0;                // their stage's time (SetTail)
  std::vector<uint8_t> forbidden_cut_;
  int32_t min_first_cut_ = 0;
  int64_t fit_evaluations_ = 0;
  bool complete_ = true;
  std::vector<int32_t> ipu_scratch_, step_scratch_, schedule_;
  std::vector<int64_t> weight_stamp_;  // the scan that last counted it
  int64_t weight_stamp_count_ = 0;
};

}  // namespace autoshard::internal

#endif  // AUTOSHARD_SOLVER_STRATEGIES_SLICE_DP_H_
