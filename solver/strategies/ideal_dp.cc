#include "solver/strategies/ideal_dp.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "solver/strategies/ideal_lattice.h"

namespace autoshard {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One run of Note [Ideal DP] over a lattice.
class PairDp {
 public:
  PairDp(const ShardingProblem& problem, const DeviceModel& model,
         const IdealLattice& lattice, int num_ipus,
         const IdealDpOptions& options, int num_hosts = 0)
      : problem_(problem),
        model_(model),
        lattice_(lattice),
        k_(num_ipus),
        h_(num_hosts),
        options_(options) {
    if (h_ > 0) HostSums();
    for (int32_t n = 0; n < problem_.num_nodes(); ++n) {
      if (!lattice_.InLattice(n)) continue;
      if (!problem_.allowed_ipus.empty() &&
          problem_.allowed_ipus[n] != ShardingProblem::kAnyIpu) {
        constrained_.push_back(n);
      }
      if (!problem_.colocate_group.empty() && problem_.colocate_group[n] >= 0) {
        grouped_.push_back(n);
      }
    }
    if (!grouped_.empty()) consistent_.assign(lattice_.size(), -1);
  }

  // Note [Constraints in the ideal DP]
  // A colocation group is on one IPU iff every ideal of the chain holds all
  // of its nodes in the lattice or none: pairs keep such ideals only. A
  // pair (a, b) may be IPU d iff every node of b \ a is allowed on d: its
  // mask (the allowed sets' intersection) is kept per pair and read per
  // layer of f. So the DP's optimum is the constrained problem's.
  bool Consistent(int32_t ideal) {
    if (grouped_.empty()) return true;
    if (consistent_[ideal] < 0) {
      // Per group: -1 unseen, 0 some out, 1 some in; both: split.
      std::vector<int8_t> seen(problem_.colocate_names.size() + 1, -1);
      bool ok = true;
      for (int32_t n : grouped_) {
        const int32_t g = problem_.colocate_group[n];
        if (g >= static_cast<int32_t>(seen.size())) seen.resize(g + 1, -1);
        const int8_t in = lattice_.Contains(ideal, n) ? 1 : 0;
        if (seen[g] >= 0 && seen[g] != in) ok = false;
        seen[g] = in;
      }
      consistent_[ideal] = ok ? 1 : 0;
    }
    return consistent_[ideal] != 0;
  }

  // The IPUs (bits 0..63) every node of b \ a may run on; kAnyIpu when no
  // node there is constrained.
  uint64_t AllowedMask(int32_t a, int32_t b) const {
    uint64_t mask = ShardingProblem::kAnyIpu;
    for (int32_t n : constrained_)
      if (lattice_.Contains(b, n) && !lattice_.Contains(a, n))
        mask &= problem_.allowed_ipus[n];
    return mask;
  }

  // Whether pair e may run on IPU d.
  bool PairOnIpu(int64_t e, int d) const {
    if (mask_.empty() || mask_[e] == ShardingProblem::kAnyIpu) return true;
    return d < 64 && ((mask_[e] >> d) & 1) != 0;
  }

  double Time(int32_t a, int32_t b) {
    if (problem_.copies_through_host) return HostTime(a, b);
    return lattice_.compute_s(b) - lattice_.compute_s(a) +
           model_.CopySeconds(lattice_.boundary_bytes(a)) +
           model_.CopySeconds(lattice_.boundary_bytes(b));
  }

  // Through host memory: the IPU running b \ a sends each of its tensors
  // read after b once, and receives each tensor of a it reads once.
  // O(nodes + their edges).
  double HostTime(int32_t a, int32_t b) {
    double sent = 0, received = 0;
    received_.clear();
    for (int32_t n = 0; n < problem_.num_nodes(); ++n) {
      if (!lattice_.InLattice(n) || !lattice_.Contains(b, n) ||
          lattice_.Contains(a, n)) {
        continue;
      }
      for (size_t slot = 0; slot < problem_.output_bytes[n].size(); ++slot) {
        for (int32_t c : problem_.output_consumers[n][slot]) {
          if (lattice_.InLattice(c) && !lattice_.Contains(b, c)) {
            sent += static_cast<double>(problem_.output_bytes[n][slot]);
            break;
          }
        }
      }
      for (auto tensor : problem_.input_tensors[n])
        if (lattice_.Contains(a, tensor.first)) received_.push_back(tensor);
    }
    std::sort(received_.begin(), received_.end());
    received_.erase(std::unique(received_.begin(), received_.end()),
                    received_.end());
    for (auto [producer, slot] : received_)
      received += static_cast<double>(problem_.output_bytes[producer][slot]);
    return lattice_.compute_s(b) - lattice_.compute_s(a) +
           model_.CopySeconds(sent) + model_.CopySeconds(received);
  }

  // Note [Host devices in the ideal DP]
  // With h host devices (issue 31; Tarnawski et al.'s CPUs), f gains a
  // dimension: f[c][j][I] = the smallest bottleneck of placing ideal I on c
  // host devices and j IPUs, the chain's stages in any order of the two
  // kinds. A pair (a, b) is also a host stage of time H(b) - H(a) (Σ
  // host_time_s: no copies, no memory) when every node of b \ a may run
  // there, and an IPU stage only when none of b \ a is host_only; a host
  // device may stay empty. Per ideal: H, and the counts of nodes without a
  // host time and of host_only nodes (a pair's b \ a holds one iff the
  // counts differ), so a pair's host time is O(1); CollectPairs scans a
  // second window, the ideals by H within cap of H(b).
  void HostSums() {
    const int32_t size = lattice_.size();
    host_sum_.assign(size, 0);
    no_host_.assign(size, 0);
    host_only_.assign(size, 0);
    for (int32_t i = 0; i < size; ++i) {
      for (int32_t n = 0; n < problem_.num_nodes(); ++n) {
        if (!lattice_.InLattice(n) || !lattice_.Contains(i, n)) continue;
        // A node restricted to some IPUs (allowed_ipus, --pin) names IPUs
        // only, so it may not run on a host either.
        const bool pinned =
            !problem_.allowed_ipus.empty() &&
            problem_.allowed_ipus[n] != ShardingProblem::kAnyIpu;
        if (problem_.host_time_s[n] < 0 || pinned) {
          ++no_host_[i];
        } else {
          host_sum_[i] += problem_.host_time_s[n];
        }
        if (!problem_.host_only.empty() && problem_.host_only[n]) {
          ++host_only_[i];
        }
      }
    }
    host_order_.resize(size);
    for (int32_t i = 0; i < size; ++i) host_order_[i] = i;
    std::stable_sort(
        host_order_.begin(), host_order_.end(),
        [&](int32_t x, int32_t y) { return host_sum_[x] < host_sum_[y]; });
    host_rank_.resize(size);
    for (int32_t r = 0; r < size; ++r) host_rank_[host_order_[r]] = r;
  }

  double HostStageTime(int32_t a, int32_t b) const {
    if (no_host_[a] != no_host_[b]) return kInf;
    return std::max(0.0, host_sum_[b] - host_sum_[a]);
  }

  // Keeps the pairs (a, b), a ⊆ b (a ≠ b unless allow_empty), with
  // time <= cap (with host devices: either time). False when a limit
  // stopped it.
  bool CollectPairs(double cap, bool allow_empty) {
    const int32_t size = lattice_.size();
    const std::vector<int32_t>& order = lattice_.by_compute();
    std::vector<int32_t> rank(size);
    for (int32_t r = 0; r < size; ++r) rank[order[r]] = r;
    start_.assign(size + 1, 0);
    int64_t tests = 0;
    for (int32_t b = 0; b < size; ++b) {
      start_[b] = static_cast<int64_t>(from_.size());
      if ((b & 63) == 0 &&
          std::chrono::steady_clock::now() > options_.deadline) {
        return false;
      }
      // False: a limit stopped it.
      auto consider = [&](int32_t a) {
        if (a == b ? !allow_empty : a > b) return true;  // ⊆ only to a smaller
        if (++tests > options_.max_subset_tests) return false;
        if (!lattice_.Subset(a, b)) return true;
        if (!Consistent(a) || !Consistent(b)) return true;
        const uint64_t mask = AllowedMask(a, b);
        double t = kInf, host_t = kInf;
        if (mask != 0 && (h_ == 0 || host_only_[a] == host_only_[b])) {
          t = Time(a, b);
        }
        if (h_ > 0) host_t = HostStageTime(a, b);
        if (!(t <= cap) && !(host_t <= cap)) return true;
        if (!constrained_.empty()) mask_.push_back(mask);
        from_.push_back(a);
        time_.push_back(t <= cap ? t : kInf);
        if (h_ > 0) host_time_.push_back(host_t <= cap ? host_t : kInf);
        return static_cast<int64_t>(from_.size()) <= options_.max_pairs;
      };
      const double lowest = lattice_.compute_s(b) - cap;
      // The ideals with compute in [P(b) - cap, P(b)], and equal ones after.
      int32_t r = rank[b];
      while (r > 0 && lattice_.compute_s(order[r - 1]) >= lowest) --r;
      for (; r < size && lattice_.compute_s(order[r]) <= lattice_.compute_s(b);
           ++r) {
        if (!consider(order[r])) return false;
      }
      if (h_ == 0) continue;
      // A host stage's time is H(b) - H(a): the ideals with H in
      // [H(b) - cap, H(b)] (and equal ones after) that the scan above left.
      const double host_lowest = host_sum_[b] - cap;
      r = host_rank_[b];
      while (r > 0 && host_sum_[host_order_[r - 1]] >= host_lowest) --r;
      for (; r < size && host_sum_[host_order_[r]] <= host_sum_[b]; ++r) {
        const int32_t a = host_order_[r];
        if (lattice_.compute_s(a) >= lowest &&
            lattice_.compute_s(a) <= lattice_.compute_s(b)) {
          continue;  // seen above
        }
        if (!consider(a)) return false;
      }
    }
    start_[size] = static_cast<int64_t>(from_.size());
    fit_.assign(from_.size(), kUnknown);
    return true;
  }

  // f[k][all]; `judge` true: a pair must fit; `max_empty` >= 0: at most
  // that many IPUs empty (pairs (b, b)), counted in a layer of f per count
  // (Note [Empty IPUs]); -1: no limit. False when the deadline or the fit
  // budget stopped it.
  // With host devices (Note [Host devices in the ideal DP]) over c = 0..h
  // too; kind_ says what gave each entry.
  bool Solve(bool judge, int max_empty, double* value) {
    const int32_t size = lattice_.size();
    layers_ = max_empty >= 0 ? max_empty + 1 : 1;
    best_.assign(static_cast<size_t>(h_ + 1) * (k_ + 1) * layers_ * size, kInf);
    arg_.assign(best_.size(), -1);
    kind_.assign(best_.size(), kIpuStage);
    best_[Index(0, 0, 0, 0)] = 0;
    // (value, pair or -1 for an empty host device, kind)
    std::vector<std::tuple<double, int64_t, int8_t>> values;
    for (int c = 0; c <= h_; ++c) {
      for (int j = 0; j <= k_; ++j) {
        if (c == 0 && j == 0) continue;
        const bool last = c == h_ && j == k_;
        for (int32_t b = (last ? lattice_.full() : 0); b < size; ++b) {
          if ((b & 255) == 0 &&
              std::chrono::steady_clock::now() > options_.deadline) {
            return false;
          }
          for (int empties = 0; empties < layers_; ++empties) {
            values.clear();
            for (int64_t e = start_[b]; e < start_[b + 1]; ++e) {
              if (j > 0 && time_[e] < kInf && PairOnIpu(e, j - 1)) {
                const int before_empties =
                    empties - (max_empty >= 0 && from_[e] == b ? 1 : 0);
                if (before_empties >= 0) {
                  const double before =
                      best_[Index(c, j - 1, before_empties, from_[e])];
                  if (before < kInf)
                    values.emplace_back(std::max(before, time_[e]), e,
                                        kIpuStage);
                }
              }
              if (c > 0 && from_[e] != b && host_time_[e] < kInf) {
                const double before = best_[Index(c - 1, j, empties, from_[e])];
                if (before < kInf)
                  values.emplace_back(std::max(before, host_time_[e]), e,
                                      kHostStage);
              }
            }
            if (c > 0 && best_[Index(c - 1, j, empties, b)] < kInf) {
              values.emplace_back(best_[Index(c - 1, j, empties, b)], -1,
                                  kHostEmpty);
            }
            // In ascending order, the first that fits: the smallest first,
            // the rest sorted only when it does not (the same choice; a
            // sort per entry was a third of auto's time on the Llama-2-70B
            // shapes at 128 IPUs).
            if (values.empty()) continue;
            std::iter_swap(values.begin(),
                           std::min_element(values.begin(), values.end()));
            for (size_t i = 0; i < values.size(); ++i) {
              const auto [v, e, kind] = values[i];
              if (judge && kind == kIpuStage && !Fits(e, b)) {
                if (out_of_budget_) return false;
                memory_binding_ = true;
                if (i == 0) std::sort(values.begin() + 1, values.end());
                continue;
              }
              const size_t at = Index(c, j, empties, b);
              best_[at] = v;
              arg_[at] = e >= 0 ? from_[e] : b;
              kind_[at] = kind;
              break;
            }
          }
        }
      }
    }
    *value = kInf;
    for (int empties = 0; empties < layers_; ++empties) {
      *value = std::min(*value, best_[Index(h_, k_, empties, lattice_.full())]);
    }
    return true;
  }

  // The least Σ stage times of a chain of k_ ideals ending at the full one
  // with every stage time <= cap (pairs from CollectPairs with empty IPUs
  // allowed); infinity when there is none. O(k x pairs).
  double LeastTotal(double cap) {
    const int32_t size = lattice_.size();
    std::vector<double> g(size, kInf), next(size);
    g[0] = 0;
    for (int j = 1; j <= k_; ++j) {
      for (int32_t b = 0; b < size; ++b) {
        next[b] = kInf;
        for (int64_t e = start_[b]; e < start_[b + 1]; ++e)
          if (time_[e] <= cap)
            next[b] = std::min(next[b], g[from_[e]] + time_[e]);
      }
      g.swap(next);
    }
    return g[lattice_.full()];
  }

  // IPU of every node for the optimum (PlaceConstants for the constants).
  // Plans only: they solve with no empty IPU, so with one layer. With host
  // devices: each node's position among the chain's non-empty devices, and
  // in *host_positions the positions that are host devices (ascending).
  std::vector<int32_t> IpuOfNodes(
      std::vector<int32_t>* host_positions = nullptr) const {
    std::vector<int32_t> chain = {lattice_.full()};  // from the last
    std::vector<int8_t> kinds;
    int32_t b = lattice_.full();
    int c = h_, j = k_;
    while (c > 0 || j > 0) {
      const size_t at = Index(c, j, 0, b);
      const int8_t kind = kind_[at];
      b = arg_[at];
      if (kind == kIpuStage) {
        --j;
      } else {
        --c;
      }
      if (kind == kHostEmpty) continue;
      chain.push_back(b);
      kinds.push_back(kind);
    }
    std::reverse(chain.begin(), chain.end());  // chain[d] = I_{d-1}
    std::reverse(kinds.begin(), kinds.end());
    if (host_positions != nullptr) {
      host_positions->clear();
      for (size_t d = 0; d < kinds.size(); ++d)
        if (kinds[d] == kHostStage) host_positions->push_back(d);
    }
    std::vector<int32_t> ipu(problem_.num_nodes(), 0);
    for (int32_t n = 0; n < problem_.num_nodes(); ++n) {
      if (!lattice_.InLattice(n)) continue;
      int32_t d = 0;
      while (!lattice_.Contains(chain[d + 1], n)) ++d;
      ipu[n] = d;
    }
    PlaceConstants(problem_, PassiveConstants(problem_), &ipu);
    return ipu;
  }

  int64_t pairs() const { return static_cast<int64_t>(from_.size()); }
  int64_t fit_evaluations() const { return fit_evaluations_; }
  bool memory_binding() const { return memory_binding_; }

 private:
  static constexpr int8_t kUnknown = -1;
  static constexpr int8_t kIpuStage = 0, kHostStage = 1, kHostEmpty = 2;
  size_t Index(int c, int j, int empties, int32_t b) const {
    return ((static_cast<size_t>(c) * (k_ + 1) + j) * layers_ + empties) *
               lattice_.size() +
           b;
  }

  // Whether the IPU running b \ from_[e] fits, with the constants it reads.
  bool Fits(int64_t e, int32_t b) {
    if (fit_[e] != kUnknown) return fit_[e] != 0;
    if (fit_evaluations_ >= options_.max_fit_evaluations) {
      out_of_budget_ = true;
      return false;
    }
    const int32_t a = from_[e];
    const int n = problem_.num_nodes();
    if (scratch_.empty()) {
      scratch_.assign(n, 1);
      steps_.assign(n, -1);
      passive_ = PassiveConstants(problem_);
    }
    for (auto it = problem_.topo_order.rbegin();
         it != problem_.topo_order.rend(); ++it) {
      const int32_t node = *it;
      bool here = lattice_.Contains(b, node) && !lattice_.Contains(a, node);
      if (passive_[node]) {
        for (int32_t c : problem_.consumers[node]) here |= scratch_[c] == 0;
      }
      scratch_[node] = here ? 0 : 1;
    }
    schedule_.clear();
    for (int32_t node : problem_.topo_order)
      if (scratch_[node] == 0) schedule_.push_back(node);
    const bool fits =
        model_.EvaluateSchedule(scratch_, 0, schedule_, &steps_).fits;
    for (int32_t node : schedule_) scratch_[node] = 1;
    ++fit_evaluations_;
    fit_[e] = fits ? 1 : 0;
    return fits;
  }

  const ShardingProblem& problem_;
  const DeviceModel& model_;
  const IdealLattice& lattice_;
  const int k_;
  const int h_;  // host devices
  const IdealDpOptions& options_;
  std::vector<int64_t> start_;  // per b: its pairs' first index
  std::vector<int32_t> from_;   // per pair: a
  std::vector<double> time_;    // per pair: time(a, b)
  std::vector<int8_t> fit_;     // per pair: kUnknown, 0 or 1
  int layers_ = 1;              // counts of empty IPUs f tells apart
  std::vector<double> best_;    // f[j][empties][I]
  std::vector<int32_t> arg_;    // the I' that gave it
  std::vector<int8_t> kind_;    // kIpuStage, kHostStage or kHostEmpty
  // Note [Host devices in the ideal DP]: per pair its host time (infinity:
  // not a host stage; empty without hosts), per ideal H, the nodes without
  // a host time, the host_only nodes.
  std::vector<double> host_time_, host_sum_;
  std::vector<int32_t> no_host_, host_only_;
  std::vector<int32_t> host_order_, host_rank_;  // ideals by H, and inverse
  std::vector<int32_t> scratch_, steps_, schedule_;
  // Note [Constraints in the ideal DP]: the lattice's constrained and
  // grouped nodes, per ideal whether it splits no group (-1 unknown), per
  // pair its allowed IPUs (empty: no node constrained).
  std::vector<int32_t> constrained_, grouped_;
  std::vector<int8_t> consistent_;
  std::vector<uint64_t> mask_;
  std::vector<uint8_t> passive_;
  std::vector<std::pair<int32_t, int32_t>> received_;  // HostTime's
  int64_t fit_evaluations_ = 0;
  bool out_of_budget_ = false;
  bool memory_binding_ = false;  // a candidate was passed over: it did not fit
};

// Every stage time of any split is at most this: all compute on one IPU,
// and every tensor sent and received (either copy model).
double NoCap(const ShardingProblem& problem, const IdealLattice& lattice,
             const DeviceModel& model) {
  double bytes = 0;
  for (const auto& slots : problem.output_bytes)
    for (int64_t b : slots) bytes += static_cast<double>(b);
  return lattice.compute_s(lattice.full()) + 2 * model.CopySeconds(bytes);
}

// Note [Empty IPUs]
// Every IPU of a plan holds a node, so an IPU the lattice leaves empty holds
// at least one folded constant of its own: with c such constants at most c
// IPUs are empty. Counting them costs a layer of the DP per count, so the
// count is kept only while (c + 1) x pairs x k stays under kEmptyLayerWork
// and c < k - 1 (else it cannot bind); without it the bound is weaker, still
// valid. -1: no limit; 0: no empty IPU.
constexpr int64_t kEmptyLayerWork = 200000000;

int EmptyLimit(bool allow_empty, int constants, int num_ipus, int64_t pairs) {
  if (!allow_empty) return 0;
  if (constants >= num_ipus - 1) return -1;
  if ((constants + 1) * std::max<int64_t>(pairs, 1) * num_ipus >
      kEmptyLayerWork) {
    return -1;
  }
  return constants;
}

IdealDpResult Run(const ShardingProblem& problem, const DeviceModel& model,
                  int num_ipus, double cap_s, bool plan, bool judge,
                  const IdealDpOptions& options, int num_hosts = 0) {
  IdealDpResult result;
  if (num_ipus < 1) return result;
  // At most 32 MB of ideals' bits.
  const int64_t words = std::max<int64_t>(1, (problem.num_nodes() + 63) / 64);
  const IdealLattice lattice(
      problem, model, std::min<int64_t>(options.max_ideals, (1 << 22) / words));
  result.ideals = lattice.size();
  if (!lattice.complete()) return result;
  double no_cap = NoCap(problem, lattice, model);
  if (num_hosts > 0) {
    for (double t : problem.host_time_s) no_cap += std::max(t, 0.0);
  }
  const double cap = std::min(cap_s, no_cap) * (1 + 1e-9);
  PairDp dp(problem, model, lattice, num_ipus, options, num_hosts);
  // A plan's IPUs each hold a node (ValidateAssignment), but one may hold
  // only folded constants, which the lattice leaves out: the bound then lets
  // an IPU be empty, at most once per such constant (Note [Empty IPUs]).
  const std::vector<uint8_t> passive = PassiveConstants(problem);
  const int constants =
      static_cast<int>(std::count(passive.begin(), passive.end(), 1));
  const bool allow_empty = !plan && (constants > 0 || options.allow_empty_ipus);
  const bool collected = dp.CollectPairs(cap, allow_empty);
  result.pairs = dp.pairs();
  if (!collected) return result;
  result.ran = true;
  double value = kInf;
  result.complete =
      dp.Solve(judge,
               allow_empty && options.allow_empty_ipus
                   ? -1
                   : EmptyLimit(allow_empty, constants, num_ipus, dp.pairs()),
               &value);
  result.fit_evaluations = dp.fit_evaluations();
  result.memory_binding = dp.memory_binding();
  if (!result.complete || value == kInf) return result;
  result.found = true;
  result.fits = judge;
  result.bottleneck_s = value;
  if (plan) result.ipu = dp.IpuOfNodes(&result.host_positions);
  return result;
}

// The bisection of IdealDpFillerBound over an enumerated lattice.
IdealDpResult FillerBisection(const ShardingProblem& problem,
                              const DeviceModel& model,
                              const IdealLattice& lattice, int num_ipus,
                              double filler_s, double lower_s, double upper_s,
                              const IdealDpOptions& options) {
  IdealDpResult result;
  result.ideals = lattice.size();
  PairDp dp(problem, model, lattice, num_ipus, options);
  const bool collected = dp.CollectPairs(upper_s * (1 + 1e-9), true);
  result.pairs = dp.pairs();
  if (!collected) return result;
  result.ran = true;
  const double tolerance = 1e-9 * std::max(upper_s, 1e-30);
  auto feasible = [&](double t) {
    return dp.LeastTotal(t + tolerance) <=
           num_ipus * t - filler_s + num_ipus * tolerance;
  };
  double lo = lower_s, hi = upper_s;
  if (feasible(lo)) {
    result.complete = result.found = true;
    result.bottleneck_s = lower_s;
    return result;
  }
  while (hi - lo > 1e-4 * hi) {
    if (std::chrono::steady_clock::now() > options.deadline) break;
    const double mid = (lo + hi) / 2;
    (feasible(mid) ? hi : lo) = mid;
  }
  result.complete = result.found = true;  // lo is infeasible: a bound
  result.bottleneck_s = lo;
  return result;
}

}  // namespace

IdealDpResult IdealDpSplit(const ShardingProblem& problem,
                           const DeviceModel& model, int num_ipus, double cap_s,
                           bool ignore_memory, const IdealDpOptions& options) {
  return Run(problem, model, num_ipus, cap_s, /*plan=*/true, !ignore_memory,
             options);
}

IdealDpResult IdealDpBound(const ShardingProblem& problem,
                           const DeviceModel& model, int num_ipus,
                           double upper_s, const IdealDpOptions& options) {
  return Run(problem, model, num_ipus, upper_s, /*plan=*/false,
             /*judge=*/false, options);
}

IdealDpResult IdealDpHostSplit(const ShardingProblem& problem,
                               const DeviceModel& model, int num_ipus,
                               double cap_s, const IdealDpOptions& options) {
  return Run(problem, model, num_ipus, cap_s, /*plan=*/true, /*judge=*/true,
             options, problem.HasHost() ? problem.num_host_devices : 0);
}

IdealDpResult IdealDpHostBound(const ShardingProblem& problem,
                               const DeviceModel& model, int num_ipus,
                               double upper_s, const IdealDpOptions& options) {
  return Run(problem, model, num_ipus, upper_s, /*plan=*/false,
             /*judge=*/false, options,
             problem.HasHost() ? problem.num_host_devices : 0);
}

IdealDpResult IdealDpFillerBound(const ShardingProblem& problem,
                                 const DeviceModel& model, int num_ipus,
                                 double filler_s, double lower_s,
                                 double upper_s,
                                 const IdealDpOptions& options) {
  if (num_ipus < 1 || !(lower_s < upper_s)) return {};
  const int64_t words = std::max<int64_t>(1, (problem.num_nodes() + 63) / 64);
  const IdealLattice lattice(
      problem, model, std::min<int64_t>(options.max_ideals, (1 << 22) / words));
  if (!lattice.complete()) {
    IdealDpResult result;
    result.ideals = lattice.size();
    return result;
  }
  return FillerBisection(problem, model, lattice, num_ipus, filler_s, lower_s,
                         upper_s, options);
}

}  // namespace autoshard
