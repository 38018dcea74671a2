// Where the weights live (issue 30; DESIGN.md §7): on-chip, or remote in
// Streaming Memory (the DDR beside the IPUs) and loaded every step, and
// possibly replica-sharded over n replicas of a grouping (PopXL's
// remote_replica_sharded_variable, seed 000).
//
// Note [Remote weights]
// A remote weight of B bytes sharded over n replicas (n = 1: not sharded)
// keeps ceil(B / n) bytes per replica in the Streaming Memory of the
// IPU-Machine whose IPU runs a stage reading it. Each step, that stage
// loads its shard (B / n bytes at the profile's streaming_memory_bytes_per_s)
// and, when n > 1, all-gathers the rest over the gather group's IPU-Links:
// (n - 1) x ceil(B / n) bytes at link_bytes_per_s (a ring all-gather; the
// gather group is (stride, n), pod/replica_grouping.h). So
//   load_s = (B / n) / streaming_memory_bytes_per_s
//            + (n - 1) / n x B / link_bytes_per_s.
// On the IPU the full B bytes are live from the first to the last reader of
// the weight on that IPU (the gathered tensor while in use), and nothing in
// between steps. Loads add to the stage's time unless the profile says they
// overlap compute (remote_loads_overlap_compute: the stage then takes
// max(compute and copies, loads)).
// What the planner sees (ApplyWeightLocations): the problem's
// weight_size_bytes becomes the resident bytes (0 for a remote weight),
// weight_loaded_bytes the full tensor, weight_load_s the seconds above; the
// device model adds each remote weight's load to its first reader's node
// time (in the topological order) and charges another load to every other
// IPU that reads it. Hence the bounds stay valid: a node time is never more
// than what its stage must spend (every remote weight is loaded at least by
// the stage of its first reader), and the memory any bound counts (the
// resident bytes) is never more than what an IPU holds. The certificate
// says when it was computed with remote weights (Plan.weight_locations).
#ifndef AUTOSHARD_COSTMODEL_WEIGHT_LOCATION_H_
#define AUTOSHARD_COSTMODEL_WEIGHT_LOCATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "costmodel/problem.h"
#include "proto/device.pb.h"

namespace autoshard {

// --weights-location: "on-chip" (every weight resident, the default before
// issue 30), "remote" (every weight in Streaming Memory) or "auto" (the
// planner weighs both).
inline constexpr char kWeightsOnChip[] = "on-chip";
inline constexpr char kWeightsRemote[] = "remote";
inline constexpr char kWeightsAuto[] = "auto";

// Bytes one replica keeps of a B-byte weight sharded over n replicas:
// ceil(B / n) (PopXL pads the flattened tensor to a multiple of n). n >= 1.
int64_t ShardBytes(int64_t bytes, int shard_over);

// Bytes an all-gather over n replicas brings to each replica of a B-byte
// weight: the other n - 1 shards, (n - 1) x ShardBytes(B, n) (padding
// included; (n - 1) / n x B when n divides B); 0 when n = 1.
int64_t AllGatherBytes(int64_t bytes, int shard_over);

// Seconds one stage takes to load a B-byte remote weight sharded over n
// replicas, Note [Remote weights]. Requires the profile's
// streaming_memory_bytes_per_s and link_bytes_per_s > 0.
double RemoteLoadSeconds(const proto::DeviceProfile& device, int64_t bytes,
                         int shard_over);

// InvalidArgument naming the rule when `device` has no Streaming Memory
// (streaming_memory_bytes_per_machine or its bandwidth 0): "--weights-location
// remote: the device profile 'c600' has no Streaming Memory ...".
absl::Status CheckStreamingMemory(const proto::DeviceProfile& device);

// Makes every floating-point weight of `problem` with bytes remote (integer
// ones, shapes and axes, stay constants), sharded over
// `shard_over` replicas, per Note [Remote weights]. Errors:
// CheckStreamingMemory's; InvalidArgument when shard_over < 1.
absl::Status MakeWeightsRemote(const proto::DeviceProfile& device,
                               int shard_over, ShardingProblem* problem);

// Σ weight_size_bytes: the bytes every split must keep resident on some
// IPU (the model's weights when all are on-chip).
int64_t ResidentWeightBytes(const ShardingProblem& problem);

// True when some weight of `problem` is loaded rather than resident.
bool HasRemoteWeights(const ShardingProblem& problem);

// Streaming Memory one replica's remote weights take per IPU-Machine:
// machine m holds, for each of its IPUs m x ipus_per_machine ..
// (m + 1) x ipus_per_machine - 1, the shards of the distinct remote weights
// that IPU's stages read. `remote_bytes_per_ipu[d]` is the full bytes of
// those weights on IPU d (each at most once per IPU), sharded over n.
// Returns one value per machine (ceil(num_ipus / ipus_per_machine), at
// least 1; ipus_per_machine 0 counts as 1).
std::vector<int64_t> StreamingBytesPerMachine(
    const std::vector<std::vector<int64_t>>& remote_weight_bytes_per_ipu,
    int ipus_per_machine, int shard_over);

// InvalidArgument naming the rule when the fullest machine's bytes exceed
// the profile's streaming_memory_bytes_per_machine.
absl::Status CheckStreamingCapacity(const proto::DeviceProfile& device,
                                    const std::vector<int64_t>& per_machine);

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_WEIGHT_LOCATION_H_
