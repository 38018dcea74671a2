// The ideals of a ShardingProblem's DAG, enumerated when they are few: what
// the ideal DP (solver/strategies/ideal_dp.h) searches.
//
// Note [Ideals]
// An ideal is a set of nodes closed under producers (every producer of a
// member is a member). A monotone assignment onto k IPUs (every edge from an
// IPU to the same or a later one; stage = IPU) is exactly a chain of ideals
// I_0 ⊆ I_1 ⊆ ... ⊆ I_{k-1} = V, IPU d running I_d \ I_{d-1} (Tarnawski et
// al., "Efficient algorithms for device placement of DNN graph operators",
// NeurIPS 2020, §3). Under PopART's adjacent-stage copies (ComputeCutBytes)
// the bytes crossing the boundary after IPU d are those of the tensors
// produced in I_d and read outside it, C(I_d), a function of the ideal
// alone; so IPU d's stage time is
//   time(I_{d-1}, I_d) = P(I_d) - P(I_{d-1}) + CopySeconds(C(I_{d-1}))
//                        + CopySeconds(C(I_d))
// with P the sum of node times (DeviceModel::NodeTime) and CopySeconds the
// performance model's (bytes / link + its fixed cost), and a DP over pairs
// of ideals finds the best chain exactly.
//
// Folded constants (is_constant, and all their producers constants) are left
// out of the lattice: each can join any IPU at no compute cost, and every one
// of them would double the ideal count. Their tensors are left out of C too;
// a plan places each constant with its earliest reader (PlaceConstants).
// Nodes are numbered in the problem's topological order, so an ideal's bits
// start with a run of ones (all nodes before its first missing one).
#ifndef AUTOSHARD_SOLVER_STRATEGIES_IDEAL_LATTICE_H_
#define AUTOSHARD_SOLVER_STRATEGIES_IDEAL_LATTICE_H_

#include <cstdint>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

class IdealLattice {
 public:
  // Enumerates the ideals of `problem`'s non-constant nodes, smallest first
  // (by node count), stopping when there are more than `max_ideals` (then
  // complete() is false and the lattice must not be used).
  // Cost: O(ideals x (nodes / 64 + width x degree)).
  IdealLattice(const ShardingProblem& problem, const DeviceModel& model,
               int64_t max_ideals);

  bool complete() const { return complete_; }
  int32_t size() const { return static_cast<int32_t>(compute_s_.size()); }
  // Ideal 0 is the empty set, ideal size() - 1 all the lattice's nodes.
  int32_t full() const { return size() - 1; }

  // Σ node times of ideal i (seconds).
  double compute_s(int32_t i) const { return compute_s_[i]; }
  // C(i): bytes of the tensors produced in ideal i and read outside it.
  double boundary_bytes(int32_t i) const { return boundary_bytes_[i]; }
  // Whether ideal a ⊆ ideal b. O(1) .. O(nodes / 64).
  bool Subset(int32_t a, int32_t b) const;
  // Whether lattice node `n` (a problem node id) is in ideal i.
  bool Contains(int32_t i, int32_t n) const;
  // Whether problem node `n` is in the lattice (not a folded constant).
  bool InLattice(int32_t n) const { return index_of_[n] >= 0; }

  // The ideals in ascending compute_s (ties: fewer nodes first).
  const std::vector<int32_t>& by_compute() const { return by_compute_; }

 private:
  const uint64_t* Bits(int32_t i) const {
    return &bits_[static_cast<size_t>(i) * words_];
  }

  bool complete_ = true;
  int32_t words_ = 0;
  std::vector<int32_t> index_of_;  // problem node -> lattice bit, or -1
  std::vector<uint64_t> bits_;     // words_ per ideal
  std::vector<double> compute_s_, boundary_bytes_;
  std::vector<int32_t> first_missing_;  // lowest bit not in the ideal
  std::vector<int32_t> last_present_;   // highest bit in it, -1 when empty
  std::vector<int32_t> by_compute_;
};

// Which problem nodes are folded constants whose producers are all such
// (left out of the lattice; see Note [Ideals]).
std::vector<uint8_t> PassiveConstants(const ShardingProblem& problem);

// Puts every passive constant (see PassiveConstants) on the earliest IPU of
// its readers (IPU 0 when nothing reads it), in reverse topological order so
// a chain of constants follows its last member; other nodes keep ipu[n].
void PlaceConstants(const ShardingProblem& problem,
                    const std::vector<uint8_t>& passive,
                    std::vector<int32_t>* ipu);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_IDEAL_LATTICE_H_
