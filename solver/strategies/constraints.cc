#include "solver/strategies/constraints.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "solver/strategies/ideal_lattice.h"

namespace autoshard {
namespace {

// Each group's nodes, in node order.
std::vector<std::vector<int32_t>> GroupMembers(const ShardingProblem& p) {
  std::vector<std::vector<int32_t>> groups;
  for (int32_t v = 0; v < static_cast<int32_t>(p.colocate_group.size()); ++v) {
    const int32_t g = p.colocate_group[v];
    if (g < 0) continue;
    if (static_cast<int32_t>(groups.size()) <= g) groups.resize(g + 1);
    groups[g].push_back(v);
  }
  return groups;
}

std::string GroupName(const ShardingProblem& p, int32_t g) {
  if (g < static_cast<int32_t>(p.colocate_names.size()) &&
      !p.colocate_names[g].empty()) {
    return absl::StrCat("colocate group '", p.colocate_names[g], "'");
  }
  return absl::StrCat("colocate group ", g);
}

// The IPUs below k in `mask`, as "0, 2".
std::string IpuList(uint64_t mask, int k) {
  std::vector<int> ipus;
  for (int d = 0; d < std::min(k, 64); ++d)
    if ((mask >> d) & 1) ipus.push_back(d);
  return ipus.empty() ? "none" : absl::StrJoin(ipus, ", ");
}

uint64_t MaskBelow(int k) {
  return k >= 64 ? ShardingProblem::kAnyIpu : (uint64_t{1} << k) - 1;
}

// The nodes a group forces onto its IPU in a monotone split: its members
// and every node on a path between two of them.
std::vector<int32_t> Hull(const ShardingProblem& p,
                          const std::vector<int32_t>& members) {
  const int n = p.num_nodes();
  std::vector<uint8_t> after(n, 0), before(n, 0);
  std::vector<int32_t> stack = members;
  for (int32_t v : members) after[v] = 1;
  while (!stack.empty()) {
    const int32_t v = stack.back();
    stack.pop_back();
    for (int32_t c : p.consumers[v])
      if (!after[c]) after[c] = 1, stack.push_back(c);
  }
  stack = members;
  for (int32_t v : members) before[v] = 1;
  while (!stack.empty()) {
    const int32_t v = stack.back();
    stack.pop_back();
    for (int32_t q : p.producers[v])
      if (!before[q]) before[q] = 1, stack.push_back(q);
  }
  std::vector<int32_t> hull;
  for (int32_t v = 0; v < n; ++v)
    if (after[v] && before[v]) hull.push_back(v);
  return hull;
}

// Raises (up) or lowers (!up) nodes until the split is monotone and keeps
// every constraint; false when some node or group runs out of IPUs.
bool Settle(const ShardingProblem& p, int k,
            const std::vector<std::vector<int32_t>>& groups, bool up,
            std::vector<int32_t>* ipu_of_node) {
  std::vector<int32_t>& ipu = *ipu_of_node;
  const int n = p.num_nodes();
  const int step = up ? 1 : -1;
  auto inside = [&](int d) { return d >= 0 && d < k; };
  for (int round = 0; round <= n * k + 1; ++round) {
    bool changed = false;
    for (int i = 0; i < n; ++i) {
      const int32_t v = p.topo_order[up ? i : n - 1 - i];
      int d = ipu[v];
      for (int32_t u : up ? p.producers[v] : p.consumers[v])
        d = up ? std::max(d, ipu[u]) : std::min(d, ipu[u]);
      while (inside(d) && !p.IpuAllowed(v, d)) d += step;
      if (!inside(d)) return false;
      if (d != ipu[v]) ipu[v] = d, changed = true;
    }
    for (const std::vector<int32_t>& members : groups) {
      if (members.empty()) continue;
      int d = ipu[members[0]];
      for (int32_t v : members)
        d = up ? std::max(d, ipu[v]) : std::min(d, ipu[v]);
      auto all_allowed = [&](int e) {
        for (int32_t v : members)
          if (!p.IpuAllowed(v, e)) return false;
        return true;
      };
      while (inside(d) && !all_allowed(d)) d += step;
      if (!inside(d)) return false;
      for (int32_t v : members)
        if (ipu[v] != d) ipu[v] = d, changed = true;
    }
    if (!changed) return true;
  }
  return false;
}

}  // namespace

std::string BrokenConstraint(const ShardingProblem& p,
                             const std::vector<int32_t>& ipu) {
  if (!p.HasConstraints()) return "";
  for (int32_t v = 0; v < p.num_nodes(); ++v) {
    if (!p.IpuAllowed(v, ipu[v])) {
      return absl::StrCat("node '", p.names[v], "' is on IPU ", ipu[v],
                          ", allowed only on ", IpuList(p.allowed_ipus[v], 64));
    }
  }
  const std::vector<std::vector<int32_t>> groups = GroupMembers(p);
  for (int32_t g = 0; g < static_cast<int32_t>(groups.size()); ++g) {
    for (int32_t v : groups[g]) {
      if (ipu[v] != ipu[groups[g][0]]) {
        return absl::StrCat(GroupName(p, g), ": node '", p.names[groups[g][0]],
                            "' is on IPU ", ipu[groups[g][0]], ", node '",
                            p.names[v], "' on IPU ", ipu[v]);
      }
    }
  }
  return "";
}

absl::Status CheckConstraints(const ShardingProblem& p, int k,
                              const DeviceModel* model) {
  if (!p.HasConstraints()) return absl::OkStatus();
  const uint64_t below = MaskBelow(k);
  for (int32_t v = 0; v < p.num_nodes(); ++v) {
    if (p.allowed_ipus.empty() || p.allowed_ipus[v] == ShardingProblem::kAnyIpu)
      continue;
    if ((p.allowed_ipus[v] & below) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("constraints: node '", p.names[v],
                       "' may run only on IPU ", IpuList(p.allowed_ipus[v], 64),
                       ", none of the ", k, " IPUs 0..", k - 1));
    }
  }
  const std::vector<std::vector<int32_t>> groups = GroupMembers(p);
  for (int32_t g = 0; g < static_cast<int32_t>(groups.size()); ++g) {
    if (groups[g].empty()) continue;
    const std::vector<int32_t> hull = Hull(p, groups[g]);
    uint64_t shared = below;
    for (int32_t v : hull) {
      const uint64_t mask =
          p.allowed_ipus.empty() ? ShardingProblem::kAnyIpu : p.allowed_ipus[v];
      if ((shared & mask) == 0) {
        const bool member =
            std::find(groups[g].begin(), groups[g].end(), v) != groups[g].end();
        return absl::InvalidArgumentError(absl::StrCat(
            "constraints: ", GroupName(p, g), ": no IPU is allowed for all ",
            member ? "its nodes" : "its nodes and those between them",
            " (node '", p.names[v], "' only on ", IpuList(mask, 64),
            ", the others before it on ", IpuList(shared, k), ")"));
      }
      shared &= mask;
    }
    // With plain-bytes memory the hull's own bytes are a lower bound on any
    // IPU that holds it. The tile model's is not (it counts every tensor
    // the hull exchanges with another IPU as a live buffer, which a split
    // that keeps a neighbour with it does not pay): there a group that does
    // not fit is the plan's "does not fit", not a refusal.
    if (model != nullptr && k > 1 && model->PlainMemory()) {
      std::vector<int32_t> ipu(p.num_nodes(), 1);
      for (int32_t v : hull) ipu[v] = 0;
      const IpuMemory memory = model->EvaluateMemory(ipu, 0);
      if (!memory.fits) {
        return absl::InvalidArgumentError(
            absl::StrCat("constraints: ", GroupName(p, g), " (", hull.size(),
                         " nodes with those between its ", groups[g].size(),
                         ") does not fit one IPU's memory"));
      }
    }
  }
  return absl::OkStatus();
}

namespace {

// One pass of Note [Filling empty IPUs]: each empty IPU in order takes the
// allowed node of least alone_s[v] (empty: the first in node order).
bool FillEmptyIpusOnce(const ShardingProblem& p,
                       const std::vector<double>& alone_s, int k,
                       std::vector<int32_t>* ipu_of_node) {
  std::vector<int32_t>& ipu = *ipu_of_node;
  std::vector<int32_t> count(k, 0);
  for (int32_t d : ipu) {
    if (d < 0 || d >= k) return false;
    ++count[d];
  }
  for (int d = 0; d < k; ++d) {
    if (count[d] > 0) continue;
    int32_t best = -1;
    double best_s = std::numeric_limits<double>::infinity();
    for (int32_t v = 0; v < p.num_nodes(); ++v) {
      if (count[ipu[v]] < 2 || !p.IpuAllowed(v, d)) continue;
      if (!p.colocate_group.empty() && p.colocate_group[v] >= 0) continue;
      bool ok = true;
      for (int32_t q : p.producers[v]) ok &= ipu[q] <= d;
      for (int32_t c : p.consumers[v]) ok &= ipu[c] >= d;
      if (!ok) continue;
      const double s = alone_s.empty() ? 0 : alone_s[v];
      if (s < best_s) {
        best = v;
        best_s = s;
      }
      if (alone_s.empty()) break;
    }
    if (best < 0) return false;
    --count[ipu[best]];
    ipu[best] = d;
    ++count[d];
  }
  return true;
}

}  // namespace

bool FillEmptyIpus(const ShardingProblem& p, const DeviceModel* model, int k,
                   std::vector<int32_t>* ipu_of_node) {
  // A node alone on an IPU costs at least its compute and its copies in and
  // out (input_tensors: each tensor it reads once).
  std::vector<double> alone_s;
  if (model != nullptr) {
    alone_s.resize(p.num_nodes());
    for (int32_t v = 0; v < p.num_nodes(); ++v) {
      int64_t in_bytes = 0;
      for (const auto& [producer, slot] : p.input_tensors[v])
        in_bytes += p.output_bytes[producer][slot];
      alone_s[v] =
          model->NodeTime(v) +
          model->CopySeconds(static_cast<double>(in_bytes)) +
          model->CopySeconds(static_cast<double>(p.activation_bytes[v]));
    }
    std::vector<int32_t> cheapest = *ipu_of_node;
    if (FillEmptyIpusOnce(p, alone_s, k, &cheapest)) {
      *ipu_of_node = std::move(cheapest);
      return true;
    }
  }
  // The cheapest node may be the only one a later empty IPU could take (a
  // review's counter-example, FillEmptyIpusTest.FallsBackToNodeOrder): the
  // first in node order then, as before the model chose.
  return FillEmptyIpusOnce(p, {}, k, ipu_of_node);
}

std::optional<std::vector<int32_t>> RepairToConstraints(
    const ShardingProblem& p, const DeviceModel& model, int k,
    const std::vector<int32_t>& ipu_of_node) {
  const std::vector<std::vector<int32_t>> groups = GroupMembers(p);
  std::optional<std::vector<int32_t>> best;
  double best_s = std::numeric_limits<double>::infinity();
  bool best_fits = false;
  for (bool up : {true, false}) {
    std::vector<int32_t> ipu = ipu_of_node;
    for (int32_t& d : ipu) d = std::clamp(d, 0, k - 1);
    if (!Settle(p, k, groups, up, &ipu) || !FillEmptyIpus(p, &model, k, &ipu) ||
        !BrokenConstraint(p, ipu).empty()) {
      continue;
    }
    bool fits = true;
    for (int d = 0; d < k; ++d) fits &= model.EvaluateMemory(ipu, d).fits;
    const double s = model.EvaluatePerformance(ipu, k, 1).bottleneck_s;
    if (!best || (fits && !best_fits) || (fits == best_fits && s < best_s)) {
      best = std::move(ipu);
      best_s = s;
      best_fits = fits;
    }
  }
  return best;
}

std::optional<Coarsened> ContractGroups(const ShardingProblem& p,
                                        const DeviceModel& model, int k) {
  const std::vector<std::vector<int32_t>> groups = GroupMembers(p);
  const int n = p.num_nodes();
  if (groups.empty()) return std::nullopt;
  // Union-find over nodes; a set is merged with every node on a path
  // between two of its nodes, paths running through merged sets too.
  std::vector<int32_t> root(n);
  for (int32_t v = 0; v < n; ++v) root[v] = v;
  std::function<int32_t(int32_t)> find = [&](int32_t v) {
    while (root[v] != v) v = root[v] = root[root[v]];
    return v;
  };
  for (const std::vector<int32_t>& members : groups)
    for (int32_t v : members) root[find(v)] = find(members[0]);
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<std::vector<int32_t>> sets(n);
    for (int32_t v = 0; v < n; ++v) sets[find(v)].push_back(v);
    for (int32_t r = 0; r < n; ++r) {
      if (sets[r].size() < 2 || find(r) != r) continue;
      // Forward and backward closure, whole sets at a time.
      auto reach = [&](bool forward) {
        std::vector<uint8_t> seen(n, 0);
        std::vector<int32_t> stack;
        auto visit = [&](int32_t v) {
          // The sets as the round began: merges made since are followed
          // in the next round.
          if (!seen[v]) seen[v] = 1, stack.push_back(v);
          for (int32_t u : sets[find(v)])
            if (!seen[u]) seen[u] = 1, stack.push_back(u);
        };
        for (int32_t v : sets[r]) visit(v);
        while (!stack.empty()) {
          const int32_t v = stack.back();
          stack.pop_back();
          for (int32_t u : forward ? p.consumers[v] : p.producers[v]) visit(u);
        }
        return seen;
      };
      const std::vector<uint8_t> after = reach(true), before = reach(false);
      for (int32_t v = 0; v < n; ++v) {
        if (after[v] && before[v] && find(v) != find(r)) {
          root[find(v)] = find(r);
          changed = true;
        }
      }
    }
  }
  // Number the sets in a topological order of the merged graph (Kahn's
  // rule, by first topological position).
  std::vector<int32_t> missing(n, 0), number(n, -1);
  std::vector<std::vector<int32_t>> out(n);
  for (int32_t v = 0; v < n; ++v) {
    for (int32_t c : p.consumers[v]) {
      if (find(c) == find(v)) continue;
      out[find(v)].push_back(find(c));
      ++missing[find(c)];
    }
  }
  std::vector<int32_t> ready;
  std::vector<uint8_t> queued(n, 0);
  for (int32_t v : p.topo_order) {
    const int32_t r = find(v);
    if (missing[r] == 0 && !queued[r]) queued[r] = 1, ready.push_back(r);
  }
  int32_t count = 0;
  for (size_t i = 0; i < ready.size(); ++i) {
    const int32_t r = ready[i];
    number[r] = count++;
    for (int32_t s : out[r])
      if (--missing[s] == 0) ready.push_back(s);
  }
  for (int32_t v = 0; v < n; ++v)
    if (number[find(v)] < 0) return std::nullopt;  // not a DAG: cannot be
  if (count < k) return std::nullopt;
  std::vector<int32_t> group_of(n);
  std::vector<int32_t> size(count, 0);
  for (int32_t v = 0; v < n; ++v) ++size[group_of[v] = number[find(v)]];
  std::vector<uint8_t> passive = PassiveConstants(p);
  for (int32_t v = 0; v < n; ++v)
    if (size[group_of[v]] > 1) passive[v] = 0;
  Coarsened c = CoarsenGroups(p, model, group_of, passive);
  if (!p.allowed_ipus.empty()) {
    c.problem.allowed_ipus.assign(count, ShardingProblem::kAnyIpu);
    for (int32_t v = 0; v < n; ++v)
      c.problem.allowed_ipus[group_of[v]] &= p.allowed_ipus[v];
  }
  return c;
}

absl::Status ApplyPins(const std::vector<std::string>& pins,
                       ShardingProblem* p) {
  for (const std::string& pin : pins) {
    const size_t eq = pin.rfind('=');
    int ipu = -1;
    if (eq == std::string::npos || eq == 0 ||
        !absl::SimpleAtoi(pin.substr(eq + 1), &ipu) || ipu < 0 || ipu >= 64) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--pin '", pin, "': expected NODE=IPU with IPU in 0..63"));
    }
    const std::string name = pin.substr(0, eq);
    const auto it = std::find(p->names.begin(), p->names.end(), name);
    if (it == p->names.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--pin '", pin, "': no node is named '", name, "'"));
    }
    // A problem file may repeat a name (an ONNX model's are made unique).
    const auto named = std::count(p->names.begin(), p->names.end(), name);
    if (named > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--pin '", pin, "': ", named, " nodes are named '", name,
                       "'; a pin must name one"));
    }
    if (p->allowed_ipus.empty())
      p->allowed_ipus.assign(p->num_nodes(), ShardingProblem::kAnyIpu);
    p->allowed_ipus[it - p->names.begin()] &= uint64_t{1} << ipu;
  }
  return absl::OkStatus();
}

}  // namespace autoshard
