// Outputs of a plan (DESIGN.md §5): node annotations, the PopRT sharding
// config (YAML), the plan file (protobuf JSON) and the text report.
#ifndef AUTOSHARD_WRITERS_EMIT_H_
#define AUTOSHARD_WRITERS_EMIT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/annotations.h"
#include "onnx/onnx_pb.h"
#include "sharder/autoshard.h"

namespace autoshard {

// The annotations themselves (__ipu_number, __pipeline_stage):
// graph/annotations.h.

// PopRT manual-sharding YAML: a list of `{node: "NAME", device: I, stage: S}`
// (names double-quoted, so YAML 1.1 readers never turn `yes` or `0x10` into
// a boolean or number).
std::string ShardingConfigYaml(const proto::Plan& plan);

// Parses a sharding config. Errors (InvalidArgument, prefixed with `what`,
// usually the file name): not YAML, not exactly one document holding a list,
// an entry without `node` or `device`, a key other than node/device/stage,
// a `device`/`stage` that is not an integer in 0..2^31-1. `stage` defaults
// to `device` (the node names' range is checked when the points are applied).
absl::StatusOr<std::vector<NamedShardingPoint>> ParseShardingConfigYaml(
    absl::string_view text, absl::string_view what);

// The plan in protobuf's JSON mapping (indented, field names as in the
// proto), counts and bytes as JSON numbers (outputs/json_numbers.h).
std::string PlanJson(const proto::Plan& plan);

// Any message in protobuf's JSON mapping, as PlanJson prints it: NumericJson.
std::string ProtoJson(const google::protobuf::Message& message);

// The report printed on stdout (writers/report_text.cc): the IPU's
// capacity; per IPU nodes, weights, total memory, the fullest tile (bytes,
// index on the IPU, % of a tile used) and whether it fits, FLOPs, stage
// time and cut-tensor bytes sent; how many IPUs overflow, the fullest tile
// as "IPU 5 tile 589", the cut tensors; then the pipeline's bottleneck,
// throughput, latency and bounds. Every line at most 100 columns;
// `all_ipus` (-v) adds memory by kind and the optimal strategy's orders.
// Warnings are not in it: the CLI prints them on stderr. Plans of more than
// 16 IPUs fold the rows between the IPUs that matter unless `all_ipus`
// (pod/ipu_rows.h); a plan with a replication adds the POD lines.
std::string ReportText(const proto::Plan& plan, bool all_ipus = false);

// "12.34 MB" (powers of 1000) and "1.23 GFLOPs" figures for reports.
std::string HumanBytesText(double bytes);
std::string HumanFlopsText(double flops);
// The SI prefix that suits each figure: "1.234 s", "12.345 ms", "123.456 us",
// "12.345 ns", or "0 s" (Note [The report's units and width]).
std::string HumanSeconds(double s);

}  // namespace autoshard

#endif  // AUTOSHARD_WRITERS_EMIT_H_
