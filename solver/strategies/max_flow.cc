#include "solver/strategies/max_flow.h"

#include <algorithm>

namespace autoshard {

void MaxFlow::AddArc(int32_t u, int32_t v, int64_t capacity) {
  arcs_.push_back({v, head_[u], capacity});
  head_[u] = static_cast<int32_t>(arcs_.size()) - 1;
  arcs_.push_back({u, head_[v], 0});
  head_[v] = static_cast<int32_t>(arcs_.size()) - 1;
}

// Breadth-first levels over arcs with residual capacity; whether the sink
// is reached.
bool MaxFlow::Levels(int32_t source, int32_t sink, int64_t* work) {
  level_.assign(head_.size(), -1);
  queue_.clear();
  level_[source] = 0;
  queue_.push_back(source);
  for (size_t i = 0; i < queue_.size(); ++i) {
    const int32_t u = queue_[i];
    for (int32_t a = head_[u]; a >= 0; a = arcs_[a].next) {
      ++*work;
      if (arcs_[a].residual > 0 && level_[arcs_[a].to] < 0) {
        level_[arcs_[a].to] = level_[u] + 1;
        queue_.push_back(arcs_[a].to);
      }
    }
  }
  return level_[sink] >= 0;
}

// A blocking-flow step: one augmenting path from `source` along rising
// levels, found by an explicit stack of arcs (path_) rather than recursion,
// so a path of 100,000 vertices needs no deep call stack; pushes its
// bottleneck, at most `amount`. 0 when no path is left in the level graph.
int64_t MaxFlow::Push(int32_t source, int32_t sink, int64_t amount,
                      int64_t* work) {
  path_.clear();
  int32_t u = source;
  while (u != sink) {
    int32_t& a = next_arc_[u];
    while (a >= 0 &&
           (arcs_[a].residual <= 0 || level_[arcs_[a].to] != level_[u] + 1)) {
      ++*work;
      a = arcs_[a].next;
    }
    if (a >= 0) {  // advance
      ++*work;
      path_.push_back(a);
      u = arcs_[a].to;
      continue;
    }
    if (u == source) return 0;  // retreat from a dead end
    path_.pop_back();
    u = path_.empty() ? source : arcs_[path_.back()].to;
    next_arc_[u] = arcs_[next_arc_[u]].next;
  }
  int64_t pushed = amount;
  for (int32_t a : path_) pushed = std::min(pushed, arcs_[a].residual);
  for (int32_t a : path_) {
    arcs_[a].residual -= pushed;
    arcs_[a ^ 1].residual += pushed;
  }
  return pushed;
}

int64_t MaxFlow::Solve(int32_t source, int32_t sink, int64_t limit,
                       int64_t* work) {
  int64_t flow = 0;
  while (flow < limit && Levels(source, sink, work)) {
    next_arc_ = head_;
    while (flow < limit) {
      const int64_t pushed = Push(source, sink, limit - flow, work);
      if (pushed == 0) break;
      flow += pushed;
    }
  }
  return flow;
}

}  // namespace autoshard
