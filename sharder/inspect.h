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

// The graph's inputs and outputs, totals (FLOPs, MACs, weight bytes,
// parameters), the whole model's memory on one IPU, the fewest IPUs whose
// plan fits as `--num-ipus auto` plans it (options.strategy, by default
// auto; powers of two up to options.max_ipus, within options.max_search_s),
// a per-op-type and a per-node table, ops without a FLOPs rule, unresolved
// input dims, nodes of unknown shape, the dims assumed and the placement
// the model carries. `options.num_ipus` is not used. Errors as PlanModel's.
absl::StatusOr<proto::InspectReport> InspectModel(const onnx::ModelProto& model,
                                                  const Options& options);

// The report as text for a terminal.
std::string InspectText(const proto::InspectReport& report);

// The per-node table (report.nodes), one line per node, the columns fit to
// the names: node, op, FLOPs, % of the model's, weights, output shape, IPU
// ("-" when not annotated).
std::string NodesText(const proto::InspectReport& report);

// The same table as CSV with a header line: name,op_type,flops,
// flops_percent,weight_bytes,output_shape,ipu,output_shapes,data_dependent
// (output_shape "8x3x224x224", "?" for an unknown dim; ipu empty when not
// annotated; output_shapes every output's, ";" between them, "" for an
// output left out; data_dependent 1 or 0, NodeRow's).
std::string NodesCsv(const proto::InspectReport& report);

}  // namespace autoshard

#endif  // AUTOSHARD_SHARDER_INSPECT_H_
