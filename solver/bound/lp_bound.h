// A lower bound on the bottleneck that counts copies and memory: the
// assignment of nodes to pipeline stages as a mixed-integer program, solved
// with COIN-OR CBC (over CLP, Debian's coinor-libcbc-dev) within a time
// limit; the bound is the best one CBC proved.
//
// Note [MIP bound]
// Binary z[n][j] = 1 when node n runs on IPU <= j (j = 0..k-2; z[n][k-1] =
// 1), so z[n][j] <= z[n][j+1]; an edge u -> v makes z[v][j] <= z[u][j]
// (monotone). A tensor t of producer p crosses the boundary after IPU j when
// p is at or before j and a reader c after it: x[t][j] >= z[p][j] - z[c][j],
// x >= 0. IPU d's stage time, as the performance model has it with PopART's
// adjacent-stage copies (ComputeCutBytes),
//   Σ_n time_n (z[n][d] - z[n][d-1]) + (C_{d-1} + C_d) / link <= T,
//   C_j = Σ_t bytes_t x[t][j],
// and T is minimised. With `memory`: a weight w read by a node of IPU d is
// stored there (y[w][d] >= z[n][d] - z[n][d-1]), and Σ_w bytes_w y[w][d] +
// Σ_n code_n (z[n][d] - z[n][d-1]) <= tiles x bytes per tile — what every IPU
// that fits the tile-memory model places at least (weights and code are
// always live; the fullest tile holds at least the average). T starts at
// the cheap bound (DeviceModel::LowerBound). Every IPU holds a node, as in
// every plan (ValidateAssignment), unless there are folded constants: they
// are left out (see Note [Ideals]), and an IPU may hold only those. A
// relaxation, as is every bound CBC proves, so the result bounds every plan
// (every fitting one with `memory`). Times are scaled by the cheap bound so
// CBC sees values near 1.
#ifndef AUTOSHARD_SOLVER_BOUND_LP_BOUND_H_
#define AUTOSHARD_SOLVER_BOUND_LP_BOUND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

// The bound CBC proves is lowered by this fraction (see MipBound).
inline constexpr double kMipBoundMargin = 1e-4;

struct MipBoundOptions {
  // CBC's time limit (> 0), a safety net: the node and iteration limits
  // below decide the result where they stop it first, so it is the same on
  // every run; a result the clock stopped says so (stopped_by_clock).
  double max_seconds = 10;
  int max_nodes = 200;             // branch-and-bound nodes
  int max_lp_iterations = 200000;  // CLP's simplex iterations (the LP)
  bool memory = true;              // add the memory rows (for plans that fit)
  // A valid lower bound known already (seconds; T's lower bound in the
  // program); 0: the cheap bound.
  double lower_s = 0;
  // Problems with more columns than this are not solved (the result says
  // so). On the development corpus, after the min-cut bound, CBC proved
  // more on no row, and from about 2,000 columns its clock, not its node
  // limit, stopped it (docs/bound_table_history.md): so it runs only where
  // it is quick and reproducible.
  int64_t max_columns = 2000;
};

struct MipBoundResult {
  bool solved = false;          // CBC ran (else bound_s is the cheap bound)
  bool proven_optimal = false;  // CBC closed its gap: bound_s is the optimum
  double bound_s = 0;           // valid lower bound on the bottleneck
  double incumbent_s = 0;       // CBC's best split's bottleneck (0: none)
  int64_t columns = 0, rows = 0;
  int64_t nodes = 0;  // branch-and-bound nodes CBC explored
  double seconds = 0;
  bool stopped_by_clock = false;  // not reproducible: it depends on speed
  std::string note;               // why it was not solved, when not
};

// The bound of Note [MIP bound] for `num_ipus` IPUs. `incumbent_ipu`, when
// not empty, is a monotone split (per node) given to CBC as its first
// solution. Never fails: without CBC's answer, bound_s is
// model.LowerBound(num_ipus).
MipBoundResult MipBound(const ShardingProblem& problem,
                        const DeviceModel& model, int num_ipus,
                        const std::vector<int32_t>& incumbent_ipu,
                        const MipBoundOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_BOUND_LP_BOUND_H_
