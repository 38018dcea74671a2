// Which weights go off-chip when the planner chooses (issue 30 point 3,
// --weights-location auto): the fewest bytes that make every IPU of a
// placement fit, Note [Fewest bytes off-chip].
//
// Note [Fewest bytes off-chip]
// Start from every weight on-chip. For each IPU d in turn whose memory
// (DeviceModel::EvaluateMemory, the tile-memory model) does not fit, make
// remote the next floating-point on-chip weight that d reads in one order,
// re-evaluate d, and repeat until d fits; when d reads no
// on-chip weight left, the placement cannot fit with remote weights (a
// remote weight is still live on the IPU while in use, Note [Remote
// weights]). Then, largest first, bring each chosen weight back on-chip
// when every IPU that reads it still fits: this undoes the overshoot of the
// last moves. This runs twice, moving largest first and smallest first
// (ties: the lower weight id), and keeps the fewer bytes off-chip.
// Why bytes, and why two orders: the only thing a remote weight costs is
// its load, bytes / Streaming Memory bandwidth plus the all-gather, the
// same seconds per byte for every weight of one profile (RemoteLoadSeconds).
// So "the smallest load time per byte freed" does not tell weights apart,
// and the fewest bytes loaded is the fewest seconds loaded. But a remote
// weight is live on the IPU while its reader runs, so a set R of remote
// weights frees about Σ R - max R at the peak: largest first reaches a fit
// in the fewest moves but "wastes" its largest weight; smallest first
// wastes a small one and may move more of them. E.g. weights 1600, 1600
// and 800 B, 200 B too many: largest first moves both 1600s (3200 B),
// smallest first the 800 and a 1600 (2400 B). Neither is an exact
// knapsack: a smaller set may exist.
#ifndef AUTOSHARD_COSTMODEL_REMOTE_CHOICE_H_
#define AUTOSHARD_COSTMODEL_REMOTE_CHOICE_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "costmodel/precision.h"
#include "costmodel/problem.h"
#include "proto/device.pb.h"

namespace autoshard {

struct RemoteChoice {
  std::vector<int32_t> remote;  // weight ids made remote, ascending
  int64_t remote_bytes = 0;     // their full bytes
  bool fits = false;            // every IPU fits with them remote
};

// Note [Fewest bytes off-chip] for `on_chip` (every weight resident) placed
// by `ipu_of_node` onto `num_ipus` IPUs of `device`, remote weights sharded
// over `shard_over` replicas. The device must have Streaming Memory
// (CheckStreamingMemory). Cost: O(moves x all nodes).
RemoteChoice FewestBytesOffChip(const ShardingProblem& on_chip,
                                const proto::DeviceProfile& device,
                                Precision precision,
                                absl::Span<const int32_t> ipu_of_node,
                                int num_ipus, int shard_over);

// Makes the weights `remote` (ids) of `problem` remote, sharded over
// `shard_over` replicas, as MakeWeightsRemote does for every weight; the
// others keep their resident bytes. Errors: MakeWeightsRemote's;
// InvalidArgument for an id out of range.
absl::Status MakeChosenWeightsRemote(const proto::DeviceProfile& device,
                                     int shard_over,
                                     const std::vector<int32_t>& remote,
                                     ShardingProblem* problem);

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_REMOTE_CHOICE_H_
