#include "pod/ipu_rows.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/shapes.h"

namespace autoshard::pod {
namespace {

// Ranges listed at most; the rest are counted.
constexpr size_t kMaxRanges = 8;

// "0-12, 40, 77-99" for ascending indices ("..., and 5 more ranges" past
// kMaxRanges).
std::string RangesText(const std::vector<int>& ipus) {
  std::vector<std::string> parts;
  size_t more = 0;
  for (size_t i = 0; i < ipus.size();) {
    size_t j = i;
    while (j + 1 < ipus.size() && ipus[j + 1] == ipus[j] + 1) ++j;
    if (parts.size() < kMaxRanges) {
      parts.push_back(i == j ? absl::StrCat(ipus[i])
                             : absl::StrCat(ipus[i], "-", ipus[j]));
    } else {
      ++more;
    }
    i = j + 1;
  }
  if (more > 0) parts.push_back(absl::StrCat("and ", more, " more ranges"));
  return absl::StrJoin(parts, ", ");
}

}  // namespace

std::vector<IpuRun> IpuRows(const proto::Plan& plan, bool all) {
  const int k = plan.ipus_size();
  std::vector<IpuRun> runs;
  if (all || k <= kFoldAboveIpus) {
    for (int d = 0; d < k; ++d) runs.push_back({d, d});
    return runs;
  }
  std::set<int> alone = {0, 1, k - 2, k - 1};
  int slowest = 0, fullest = 0, overflowing = 0;
  for (int d = 0; d < k; ++d) {
    const proto::IpuCost& c = plan.ipus(d);
    if (c.stage_time_s() > plan.ipus(slowest).stage_time_s()) slowest = d;
    if (c.memory().max_tile_bytes() >
        plan.ipus(fullest).memory().max_tile_bytes())
      fullest = d;
    if (c.host()) alone.insert(d);  // a host row never folds into IPUs
    if (!c.memory().fits() && overflowing < kOverflowRows) {
      alone.insert(d);
      ++overflowing;
    }
  }
  alone.insert(slowest);
  alone.insert(fullest);
  int next = 0;
  for (int d : alone) {
    if (d > next) runs.push_back({next, d - 1});
    runs.push_back({d, d});
    next = d + 1;
  }
  return runs;
}

proto::IpuCost FoldIpus(const proto::Plan& plan, const IpuRun& run) {
  proto::IpuCost out = plan.ipus(run.first);
  proto::IpuMemory* m = out.mutable_memory();
  for (int d = run.first + 1; d <= run.last; ++d) {
    const proto::IpuCost& c = plan.ipus(d);
    const proto::IpuMemory& cm = c.memory();
    out.set_num_nodes(out.num_nodes() + c.num_nodes());
    out.set_flops(out.flops() + c.flops());
    out.set_stage_time_s(std::max(out.stage_time_s(), c.stage_time_s()));
    m->set_weight_bytes(SaturatingAdd(m->weight_bytes(), cm.weight_bytes()));
    m->set_code_bytes(SaturatingAdd(m->code_bytes(), cm.code_bytes()));
    m->set_exchange_bytes(
        SaturatingAdd(m->exchange_bytes(), cm.exchange_bytes()));
    m->set_activation_bytes(
        SaturatingAdd(m->activation_bytes(), cm.activation_bytes()));
    m->set_temporary_bytes(
        SaturatingAdd(m->temporary_bytes(), cm.temporary_bytes()));
    m->set_total_bytes(SaturatingAdd(m->total_bytes(), cm.total_bytes()));
    if (cm.max_tile_bytes() > m->max_tile_bytes()) {
      m->set_max_tile_bytes(cm.max_tile_bytes());
      m->set_max_tile(cm.max_tile());
    }
    m->set_fits(m->fits() && cm.fits());
  }
  return out;
}

std::string IdleIpusWarning(const proto::Plan& plan) {
  std::vector<int> idle;
  int ipus = 0;
  for (int d = 0; d < plan.ipus_size(); ++d) {
    if (plan.ipus(d).host()) continue;
    ++ipus;
    if (plan.ipus(d).stage_time_s() <= 0) idle.push_back(d);
  }
  if (idle.empty() || ipus < 2) return "";
  return absl::StrCat(
      idle.size(), " of ", ipus, " IPUs (", RangesText(idle),
      ") do no work: their nodes take 0 s (folded constants, say); fewer "
      "IPUs may give the same bottleneck (-n auto plans the fewest that fit)");
}

std::string OverflowSummary(const proto::Plan& plan) {
  std::vector<int> over;
  for (int d = 0; d < plan.ipus_size(); ++d) {
    if (!plan.ipus(d).memory().fits()) over.push_back(d);
  }
  if (over.empty()) return "";
  return absl::StrCat(over.size(), " of ", plan.ipus_size(), " IPUs overflow (",
                      RangesText(over), ")\n");
}

}  // namespace autoshard::pod
