// `autoshard inspect`: a model's costs under the cost, tile-memory and
// performance models, without planning a split to write.
#ifndef AUTOSHARD_SHARDER_INSPECT_H_
#define AUTOSHARD_SHARDER_INSPECT_H_

#include <string>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "proto/inspect.pb.h"
#include "sharder/autoshard.h"

namespace autoshard {

// Totals (FLOPs, MACs, weight bytes, parameters), the whole model's memory
// on one IPU, the fewest IPUs (powers of two up to 64) whose raw split fits,
// a per-op-type table, ops without a FLOPs rule, unresolved input dims and
// nodes of unknown shape. `options.num_ipus` and `strategy` are not used.
// Errors as PlanModel's.
absl::StatusOr<proto::InspectReport> InspectModel(const onnx::ModelProto& model,
                                                  const Options& options);

// The report as text for a terminal.
std::string InspectText(const proto::InspectReport& report);

}  // namespace autoshard

#endif  // AUTOSHARD_SHARDER_INSPECT_H_
