#include "solver/bound/lp_bound.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "CbcModel.hpp"
#include "CoinPackedMatrix.hpp"
#include "OsiClpSolverInterface.hpp"
#include "absl/strings/str_cat.h"
#include "solver/strategies/ideal_lattice.h"

namespace autoshard {
namespace {

// The program of Note [MIP bound] as sparse rows, before CBC sees it.
class MipBuilder {
 public:
  MipBuilder(const ShardingProblem& problem, const DeviceModel& model, int k,
             double scale_s)
      : problem_(problem), model_(model), k_(k), scale_s_(scale_s) {
    passive_ = PassiveConstants(problem);
    z_of_.assign(problem.num_nodes(), -1);
    for (int32_t n : problem.topo_order) {
      if (passive_[n]) continue;
      z_of_[n] = columns_;
      columns_ += k - 1;
    }
    AddColumns(columns_, 0, 1, true);
  }

  // Column of z[n][j], or -1 for the constant z[n][k-1] = 1.
  int Z(int32_t n, int j) const { return j == k_ - 1 ? -1 : z_of_[n] + j; }

  // Adds `coefficient` x (z[n][d] - z[n][d-1]) to the row being built.
  void AddOnIpu(int32_t n, int d, double coefficient) {
    if (d == k_ - 1) {
      row_constant_ += coefficient;
    } else {
      Term(Z(n, d), coefficient);
    }
    if (d >= 1) Term(Z(n, d - 1), -coefficient);
  }

  void Term(int col, double value) {
    rows_.push_back(static_cast<int>(row_lb_.size()));
    cols_.push_back(col);
    values_.push_back(value);
  }
  // Ends the row: lb <= terms + constant <= ub.
  void EndRow(double lb, double ub) {
    row_lb_.push_back(lb - row_constant_);
    row_ub_.push_back(ub - row_constant_);
    row_constant_ = 0;
  }
  int AddColumns(int count, double lb, double ub, bool integer) {
    const int first = static_cast<int>(col_lb_.size());
    for (int i = 0; i < count; ++i) {
      col_lb_.push_back(lb);
      col_ub_.push_back(ub);
      integer_.push_back(integer);
    }
    return first;
  }

  void Build(bool memory, double t_lower) {
    const double inf = COIN_DBL_MAX;
    // Monotone: z[n][j] <= z[n][j+1]; edges: z[v][j] <= z[u][j].
    for (int32_t n : problem_.topo_order) {
      if (passive_[n]) continue;
      for (int j = 0; j + 1 < k_ - 1; ++j) {
        Term(Z(n, j), 1);
        Term(Z(n, j + 1), -1);
        EndRow(-inf, 0);
      }
      for (int32_t p : problem_.producers[n]) {
        if (passive_[p]) continue;
        for (int j = 0; j < k_ - 1; ++j) {
          Term(Z(n, j), 1);
          Term(Z(p, j), -1);
          EndRow(-inf, 0);
        }
      }
    }
    // Per IPU, the copy terms of its stage-time row.
    std::vector<std::vector<std::pair<int, double>>> copies(k_);
    const double link = model_.profile().link_bytes_per_s();
    for (int32_t p : problem_.topo_order) {
      if (passive_[p]) continue;
      for (size_t slot = 0; slot < problem_.output_bytes[p].size(); ++slot) {
        const double bytes =
            static_cast<double>(problem_.output_bytes[p][slot]);
        if (bytes <= 0 || problem_.output_consumers[p][slot].empty()) continue;
        const double s = bytes / link / scale_s_;
        if (problem_.copies_through_host) {
          AddHostTensor(p, static_cast<int32_t>(slot), s, &copies);
        } else {
          AddAdjacentTensor(p, static_cast<int32_t>(slot), s, &copies);
        }
      }
    }
    t_col_ = AddColumns(1, t_lower / scale_s_, inf, false);
    // Stage times.
    for (int d = 0; d < k_; ++d) {
      for (int32_t n : problem_.topo_order) {
        if (!passive_[n] && model_.NodeTime(n) > 0)
          AddOnIpu(n, d, model_.NodeTime(n) / scale_s_);
      }
      for (auto [col, v] : copies[d]) Term(col, v);
      Term(t_col_, -1);
      EndRow(-inf, 0);
    }
    // Every IPU holds a node (ValidateAssignment); when folded constants
    // (left out) exist, one may hold only those, so then no such row.
    if (std::find(passive_.begin(), passive_.end(), 1) == passive_.end()) {
      for (int d = 0; d < k_; ++d) {
        for (int32_t n : problem_.topo_order) AddOnIpu(n, d, 1);
        EndRow(1, inf);
      }
    }
    if (memory) BuildMemory();
  }

  // PopART: x[t][j] >= z[p][j] - z[c][j], the boundary after IPU j, counted
  // on IPUs j and j + 1 (`seconds` per crossing).
  void AddAdjacentTensor(
      int32_t p, int32_t slot, double seconds,
      std::vector<std::vector<std::pair<int, double>>>* copies) {
    const int x = AddColumns(k_ - 1, 0, COIN_DBL_MAX, false);
    tensors_.push_back({p, slot, x});
    for (int j = 0; j < k_ - 1; ++j) {
      (*copies)[j].emplace_back(x + j, seconds);
      (*copies)[j + 1].emplace_back(x + j, seconds);
      for (int32_t c : problem_.output_consumers[p][slot]) {
        Term(Z(p, j), 1);
        Term(Z(c, j), -1);
        Term(x + j, -1);
        EndRow(-COIN_DBL_MAX, 0);
      }
    }
  }

  // Through the host: sent by IPU d, s[t][d] >= on(p, d) - on(c, d), and
  // received, r[t][d] >= on(c, d) - on(p, d), for every reader c.
  void AddHostTensor(int32_t p, int32_t slot, double seconds,
                     std::vector<std::vector<std::pair<int, double>>>* copies) {
    const int x = AddColumns(2 * k_, 0, COIN_DBL_MAX, false);
    tensors_.push_back({p, slot, x});
    for (int d = 0; d < k_; ++d) {
      (*copies)[d].emplace_back(x + d, seconds);
      (*copies)[d].emplace_back(x + k_ + d, seconds);
      for (int32_t c : problem_.output_consumers[p][slot]) {
        for (int side = 0; side < 2; ++side) {
          AddOnIpu(side == 0 ? p : c, d, 1);
          AddOnIpu(side == 0 ? c : p, d, -1);
          Term(x + side * k_ + d, -1);
          EndRow(-COIN_DBL_MAX, 0);
        }
      }
    }
  }

  // y[w][d] >= z[n][d] - z[n][d-1] per reader n; Σ weights + code <= capacity.
  void BuildMemory() {
    const double inf = COIN_DBL_MAX;
    const auto& profile = model_.profile();
    const double capacity = static_cast<double>(profile.tiles_per_ipu()) *
                            static_cast<double>(profile.bytes_per_tile());
    const int w_count = static_cast<int>(problem_.weight_size_bytes.size());
    y_of_.assign(w_count, -1);
    for (int32_t n : problem_.topo_order) {
      if (passive_[n]) continue;
      for (int32_t w : problem_.node_weights[n]) {
        if (y_of_[w] < 0) y_of_[w] = AddColumns(k_, 0, 1, false);
        for (int d = 0; d < k_; ++d) {
          AddOnIpu(n, d, 1);
          Term(y_of_[w] + d, -1);
          EndRow(-inf, 0);
        }
      }
    }
    for (int d = 0; d < k_; ++d) {
      for (int w = 0; w < w_count; ++w) {
        if (y_of_[w] >= 0)
          Term(y_of_[w] + d,
               static_cast<double>(problem_.weight_size_bytes[w]) / capacity);
      }
      for (int32_t n : problem_.topo_order) {
        if (!passive_[n] && model_.CodeBytes(n) > 0)
          AddOnIpu(n, d, static_cast<double>(model_.CodeBytes(n)) / capacity);
      }
      EndRow(-inf, 1);
    }
  }

  // The columns' values for a monotone split (IPU per node), but T.
  std::vector<double> Solution(const std::vector<int32_t>& ipu) const {
    std::vector<double> s(col_lb_.size(), 0);
    auto z = [&](int32_t n, int j) { return ipu[n] <= j ? 1.0 : 0.0; };
    for (int32_t n = 0; n < problem_.num_nodes(); ++n) {
      if (passive_[n]) continue;
      for (int j = 0; j < k_ - 1; ++j) s[Z(n, j)] = z(n, j);
      for (int32_t w : problem_.node_weights[n])
        if (!y_of_.empty() && y_of_[w] >= 0) s[y_of_[w] + ipu[n]] = 1;
    }
    for (const Tensor& t : tensors_) {
      for (int32_t c : problem_.output_consumers[t.node][t.slot]) {
        if (problem_.copies_through_host) {
          if (ipu[c] == ipu[t.node]) continue;
          s[t.x + ipu[t.node]] = 1;
          s[t.x + k_ + ipu[c]] = 1;
          continue;
        }
        for (int j = 0; j < k_ - 1; ++j)
          s[t.x + j] = std::max(s[t.x + j], z(t.node, j) - z(c, j));
      }
    }
    return s;  // T is the caller's: the split's bottleneck
  }

  int t_col() const { return t_col_; }
  double scale_s() const { return scale_s_; }
  int64_t num_columns() const { return static_cast<int64_t>(col_lb_.size()); }
  int64_t num_rows() const { return static_cast<int64_t>(row_lb_.size()); }

  void Load(OsiClpSolverInterface* solver) const {
    CoinPackedMatrix matrix(false, rows_.data(), cols_.data(), values_.data(),
                            static_cast<CoinBigIndex>(values_.size()));
    matrix.setDimensions(static_cast<int>(row_lb_.size()),
                         static_cast<int>(col_lb_.size()));
    std::vector<double> objective(col_lb_.size(), 0);
    objective[t_col_] = 1;
    solver->loadProblem(matrix, col_lb_.data(), col_ub_.data(),
                        objective.data(), row_lb_.data(), row_ub_.data());
    for (size_t c = 0; c < integer_.size(); ++c)
      if (integer_[c]) solver->setInteger(static_cast<int>(c));
  }

 private:
  struct Tensor {
    int32_t node, slot;
    int x;  // first of its k - 1 columns (host: 2k, sent then received)
  };
  const ShardingProblem& problem_;
  const DeviceModel& model_;
  const int k_;
  const double scale_s_;
  std::vector<uint8_t> passive_;
  std::vector<int> z_of_, y_of_;
  std::vector<Tensor> tensors_;
  int columns_ = 0, t_col_ = -1;
  std::vector<int> rows_, cols_;
  std::vector<double> values_, row_lb_, row_ub_, col_lb_, col_ub_;
  std::vector<bool> integer_;
  double row_constant_ = 0;
};

// Gives CBC the monotone split `ipu` (per node) as its first solution, its
// T the split's bottleneck in the builder's scale, at least `known_t`.
void SetIncumbent(const MipBuilder& builder, const DeviceModel& model,
                  const std::vector<int32_t>& ipu, int num_ipus, double known_t,
                  CbcModel* cbc) {
  std::vector<double> s = builder.Solution(ipu);
  const double t = model.EvaluatePerformance(ipu, num_ipus, 1).bottleneck_s /
                   builder.scale_s();
  s[builder.t_col()] = std::max(t, known_t);
  cbc->setBestSolution(s.data(), static_cast<int>(s.size()), s[builder.t_col()],
                       false);
}

}  // namespace

MipBoundResult MipBound(const ShardingProblem& problem,
                        const DeviceModel& model, int num_ipus,
                        const std::vector<int32_t>& incumbent_ipu,
                        const MipBoundOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  MipBoundResult result;
  const double cheap = model.LowerBound(num_ipus);
  result.bound_s = cheap;
  if (num_ipus < 2) {
    result.note = "one IPU: the cheap bound is the bottleneck";
    return result;
  }
  const double scale = cheap > 0 ? cheap : 1;
  // Columns: z per node, x per tensor, y per weight (k each, about).
  const int64_t estimate =
      static_cast<int64_t>(num_ipus) *
      (problem.num_nodes() * 2 +
       static_cast<int64_t>(problem.weight_size_bytes.size()));
  if (estimate > options.max_columns) {
    result.note = absl::StrCat("about ", estimate, " columns, more than ",
                               options.max_columns);
    return result;
  }
  MipBuilder builder(problem, model, num_ipus, scale);
  const double known = std::max(cheap, options.lower_s);
  builder.Build(options.memory, known);
  result.columns = builder.num_columns();
  result.rows = builder.num_rows();
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  builder.Load(&solver);
  solver.getModelPtr()->setMaximumWallSeconds(options.max_seconds);
  solver.getModelPtr()->setMaximumIterations(options.max_lp_iterations);
  // The LP relaxation first: only a proven optimum is a bound (a simplex
  // stopped by the clock has a primal value, which is not).
  solver.initialSolve();
  if (!solver.isProvenOptimal()) {
    result.stopped_by_clock = !solver.getModelPtr()->hitMaximumIterations();
    result.note = result.stopped_by_clock
                      ? "CLP did not solve the LP relaxation in time"
                      : "CLP did not solve the LP relaxation within its "
                        "iteration limit";
    return result;
  }
  const double relaxation = solver.getObjValue();
  CbcModel cbc(solver);
  cbc.setLogLevel(0);
  cbc.messageHandler()->setLogLevel(0);
  cbc.setUseElapsedTime(true);
  cbc.setMaximumSeconds(std::max(
      0.01, options.max_seconds - std::chrono::duration<double>(
                                      std::chrono::steady_clock::now() - start)
                                      .count()));
  if (!incumbent_ipu.empty())
    SetIncumbent(builder, model, incumbent_ipu, num_ipus, known / scale, &cbc);
  cbc.setMaximumNodes(options.max_nodes);
  cbc.branchAndBound();
  result.stopped_by_clock = cbc.maximumSecondsReached();
  result.nodes = cbc.getNodeCount();
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  double proven = cbc.getBestPossibleObjValue();
  if (cbc.isProvenInfeasible()) {
    result.note = "CBC proved no split feasible";
    return result;
  }
  if (!std::isfinite(proven) || proven < relaxation) proven = relaxation;
  result.solved = true;
  result.proven_optimal = cbc.isProvenOptimal();
  // Less a margin for CBC's tolerances (about 1e-6 of the scaled values,
  // and its pruning; a test saw 2e-6 too much without it).
  result.bound_s = std::max(known, proven * scale * (1 - kMipBoundMargin));
  if (cbc.bestSolution() != nullptr)
    result.incumbent_s = cbc.getObjValue() * scale;
  return result;
}

}  // namespace autoshard
