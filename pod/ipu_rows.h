// The report's per-IPU rows at POD scale: a plan of 256 IPUs keeps a
// screenful of rows (issue 15). The IPUs that matter get a row each, the
// runs between them one folded row; `-v` prints every IPU.
#ifndef AUTOSHARD_POD_IPU_ROWS_H_
#define AUTOSHARD_POD_IPU_ROWS_H_

#include <string>
#include <vector>

#include "proto/plan.pb.h"

namespace autoshard::pod {

// Plans of more IPUs than this are folded unless every IPU is asked for.
inline constexpr int kFoldAboveIpus = 16;
// Overflowing IPUs that get a row of their own (the rest are folded, and
// listed by OverflowSummary).
inline constexpr int kOverflowRows = 4;

// IPUs first .. last (indices into plan.ipus(), inclusive).
struct IpuRun {
  int first = 0;
  int last = 0;
};

// Every IPU alone when `all` or the plan has at most kFoldAboveIpus IPUs.
// Else alone: the first two and last two IPUs, the bottleneck (largest
// stage time), the fullest tile, and the first kOverflowRows IPUs that do
// not fit, and every host row (IpuCost.host); the IPUs between them one
// run each. Runs are in IPU order and
// cover every IPU once.
std::vector<IpuRun> IpuRows(const proto::Plan& plan, bool all);

// A run as one row: nodes, FLOPs and memory by kind summed (saturating),
// the fullest tile and the largest stage time of its IPUs, fits when all
// fit; ipu is the run's first.
proto::IpuCost FoldIpus(const proto::Plan& plan, const IpuRun& run);

// "37 of 256 IPUs overflow (0-12, 40, 77-99)\n", or "" when all fit.
std::string OverflowSummary(const proto::Plan& plan);

// A plan warning when IPUs do no work: "93 of 256 IPUs (0-92) do no work:
// their nodes take 0 s (...)", or "" when every IPU's stage time is above
// 0 (host rows aside) or the plan has one IPU. Such IPUs hold only nodes the
// model costs at nothing (folded constants, say: a split onto more IPUs
// than the graph has work for fills them so), so fewer IPUs may give the
// same bottleneck.
std::string IdleIpusWarning(const proto::Plan& plan);

}  // namespace autoshard::pod

#endif  // AUTOSHARD_POD_IPU_ROWS_H_
