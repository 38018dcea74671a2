// The placement a model already carries: the `__ipu_number` and
// `__pipeline_stage` annotations of an earlier `shard`/`apply` run or of a
// hand-annotated model (issue 16, point 7). `shard` warns about one and
// plans again unless --keep-placement (Options::keep_placement), which
// evaluates it as `apply` evaluates the YAML that implies it; `inspect`
// reports it.
#ifndef AUTOSHARD_SHARDER_CARRIED_PLACEMENT_H_
#define AUTOSHARD_SHARDER_CARRIED_PLACEMENT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "sharder/prepare.h"
#include "solver/strategies/sharding_points.h"

namespace autoshard::internal {

struct CarriedPlacement {
  int64_t annotated_nodes = 0;  // nodes with __ipu_number
  int32_t num_ipus = 0;         // highest __ipu_number + 1
  int32_t num_stages = 0;       // highest __pipeline_stage + 1
  // Per node of p.analysis->dag; whole only when `error` is ok.
  Assignment assignment;
  // InvalidArgument naming the node when a node lacks either attribute or
  // has a bad value, or the placement breaks ValidateAssignment's rules.
  absl::Status error;
};

// Reads the annotations of p.analysis->dag's nodes. annotated_nodes is 0 for a
// model without any.
CarriedPlacement ReadCarriedPlacement(const Prepared& p);

// "the model already carries __ipu_number on 12 of 12 nodes (2 IPUs, 2
// pipeline stages)".
std::string CarriedPlacementText(const CarriedPlacement& c, int num_nodes);

}  // namespace autoshard::internal

#endif  // AUTOSHARD_SHARDER_CARRIED_PLACEMENT_H_
