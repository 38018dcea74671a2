// What a plan says of where its weights live (issue 30; proto
// WeightLocations, Note [Remote weights] in costmodel/weight_location.h):
// the report's lines and the PopART session options a runtime reads.
#ifndef AUTOSHARD_POD_WEIGHTS_REPORT_H_
#define AUTOSHARD_POD_WEIGHTS_REPORT_H_

#include <string>

#include "proto/plan.pb.h"

namespace autoshard::pod {

// The report's lines: where the weights live, the remote and resident
// bytes, Streaming Memory per IPU-Machine against its capacity, the largest
// remote weights, and the other location's throughput when one was
// weighed. Empty when the plan has no weight_locations or every weight is
// on-chip and nothing else was weighed.
std::string WeightLocationsText(const proto::Plan& plan);

// PopART SessionOptions for the plan's weights, as JSON (names as PopART's
// SessionOptions spells them, popart/sessionoptions.hpp):
//   {"weightTensorLocationSettings": {"location": {"storage": "OffChip",
//     "replicatedTensorSharding": "On", "shardingDomain": {"type":
//     "Consecutive", "replicaGroupSize": n}}, "minElementsForOffChip": 0,
//     "minElementsForReplicatedTensorSharding": 0},
//    "tensorLocationSettingsOverride": {NAME: {"storage": "OffChip",
//     "replicatedTensorSharding": "On"}, ...},
//    "autoshard": {"retrievalMode": "one_per_group"}}
// (storage "OnChip" and sharding "Off" for an on-chip plan; the override
// names every remote weight, and a sharded location carries its
// "shardingDomain": {"type": "Consecutive" or, for a grouping with a
// stride, "Orthogonal", "replicaGroupSize": n}.) The strings are PopART's
// enum names (TensorStorage::OffChip, ReplicatedTensorSharding::On,
// CommGroupType); a script sets them on popart.SessionOptions. "autoshard"
// is not a SessionOptions field: the retrieval mode for the program.
std::string PopartOptionsJson(const proto::Plan& plan);

}  // namespace autoshard::pod

#endif  // AUTOSHARD_POD_WEIGHTS_REPORT_H_
