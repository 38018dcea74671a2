#include "sharder/bound/heavy_bound.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "sharder/strategies/max_flow.h"

namespace autoshard {
namespace {

// Larger than any finite cut: Σ bytes and Σ node times x L stay far below.
constexpr int64_t kInfinite = int64_t{1} << 60;

// Bytes of node x's time at L bytes/s, rounded down (Note [Heavy-node
// bound]), capped below kInfinite.
int64_t TimeBytes(double seconds, double link_bytes_per_s) {
  const double b = std::floor(seconds * link_bytes_per_s);
  return b <= 0 ? 0 : static_cast<int64_t>(std::min(b, 1e17));
}

}  // namespace

HeavyBoundResult HeavyNodeBound(const ShardingProblem& problem,
                                const DeviceModel& model, double lower_s,
                                const HeavyBoundOptions& options) {
  HeavyBoundResult result;
  const int32_t n = problem.num_nodes();
  const double link = model.profile().link_bytes_per_s();
  if (n == 0 || !(link > 0)) return result;
  // The tensors read by some node: (producer, slot, bytes).
  struct Tensor {
    int32_t producer, slot;
    int64_t bytes;
  };
  std::vector<Tensor> tensors;
  // Each node's upper value t(v) + its own tensors' bytes / L (X = {v}).
  std::vector<double> own_s(n);
  for (int32_t v = 0; v < n; ++v) own_s[v] = model.NodeTime(v);
  for (int32_t p = 0; p < n; ++p) {
    for (int32_t s = 0;
         s < static_cast<int32_t>(problem.output_bytes[p].size()); ++s) {
      const auto& readers = problem.output_consumers[p][s];
      const int64_t bytes = problem.output_bytes[p][s];
      if (readers.empty() || bytes <= 0) continue;
      tensors.push_back({p, s, bytes});
      own_s[p] += static_cast<double>(bytes) / link;
      for (int32_t r : readers) own_s[r] += static_cast<double>(bytes) / link;
    }
  }
  std::vector<int32_t> order;
  for (int32_t v = 0; v < n; ++v)
    if (own_s[v] > lower_s) order.push_back(v);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return own_s[a] != own_s[b] ? own_s[a] > own_s[b] : a < b;
  });
  const int32_t num_tensors = static_cast<int32_t>(tensors.size());
  // Vertices: 0 source, 1 sink, 2 + node, then two per tensor.
  int64_t work = 0;
  for (int32_t v : order) {
    if (result.tried >= options.max_nodes_tried) break;
    if (work > options.max_work) {
      result.out_of_work = true;
      break;
    }
    // The candidates are sorted by their upper value: none left can beat
    // the best found.
    if (own_s[v] <= std::max(lower_s, result.bound_s)) break;
    MaxFlow flow(2 + n + 2 * num_tensors);
    flow.AddArc(0, 2 + v, kInfinite);
    for (int32_t x = 0; x < n; ++x) {
      const int64_t cost = TimeBytes(model.NodeTime(x), link);
      if (cost > 0) flow.AddArc(2 + x, 1, cost);
    }
    for (int32_t i = 0; i < num_tensors; ++i) {
      const Tensor& t = tensors[i];
      const int32_t a = 2 + n + 2 * i, b = a + 1;
      flow.AddArc(a, b, t.bytes);
      flow.AddArc(2 + t.producer, a, kInfinite);
      flow.AddArc(b, 2 + t.producer, kInfinite);
      for (int32_t r : problem.output_consumers[t.producer][t.slot]) {
        flow.AddArc(2 + r, a, kInfinite);
        flow.AddArc(b, 2 + r, kInfinite);
      }
    }
    const int64_t cut = flow.Solve(0, 1, kInfinite, &work);
    ++result.tried;
    if (cut >= kInfinite) continue;  // cannot happen: X = {v} is finite
    const double h = static_cast<double>(cut) / link;
    if (h > result.bound_s) {
      result.bound_s = h;
      result.node = v;
    }
  }
  return result;
}

}  // namespace autoshard
