// Subgraphs: the coarse units of the raw split and the search (DESIGN.md §4.1
// steps 2-4, after PopRT's auto-sharding tool).
//
// Candidates are the nodes with more than one non-constant input (merge
// points), or every node when there is none. In topological order each
// candidate starts a subgraph: a walk towards the inputs over nodes no earlier
// subgraph holds. A subgraph whose weight bytes or FLOPs are below the average
// per candidate is dropped and its nodes released. Nodes left over form one
// last subgraph. Subgraph ids follow that order, and every edge between two
// subgraphs goes from a lower id to a higher one.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_SUBGRAPHS_H_
#define AUTOSHARD_SOLVER_STRATEGIES_SUBGRAPHS_H_

#include <cstdint>
#include <vector>

#include "costmodel/problem.h"

namespace autoshard {

inline constexpr int32_t kLeftoverStart = -1;

struct Subgraph {
  int32_t id = 0;
  int32_t start_node = kLeftoverStart;  // the candidate; -1 for leftovers
  std::vector<int32_t> nodes;           // in topological order
  int64_t weight_bytes = 0;  // Σ per-node weight bytes (PopRT's bytes cost)
  double flops = 0;
  // Parents: subgraphs with an edge into this one. PopRT looked only at edges
  // from a parent's start node, which misses edges from its other nodes.
  std::vector<int32_t> parents;  // sorted, all < id
  std::vector<int32_t> kids;     // sorted, all > id
};

struct SubgraphOptions {
  bool drop_small = true;             // drop below-average subgraphs
  bool every_node_candidate = false;  // make every node a candidate
};

class SubgraphSet {
 public:
  SubgraphSet(const ShardingProblem& problem, const SubgraphOptions& options);

  const std::vector<Subgraph>& subgraphs() const { return subgraphs_; }
  int size() const { return static_cast<int>(subgraphs_.size()); }
  int32_t subgraph_of_node(int32_t node) const {
    return subgraph_of_node_[node];
  }
  int num_candidates() const { return num_candidates_; }

  // True when `b` is a transitive parent of `a` ("a includes b"). Walks
  // parents of `a` whose ids are >= b, so it costs at most the subgraphs
  // between b and a.
  bool Includes(int32_t a, int32_t b) const;
  // Neither includes the other, and a != b.
  bool IsParallel(int32_t a, int32_t b) const {
    return a != b && !Includes(a, b) && !Includes(b, a);
  }

 private:
  std::vector<Subgraph> subgraphs_;
  std::vector<int32_t> subgraph_of_node_;
  int num_candidates_ = 0;
};

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_SUBGRAPHS_H_
