// Outputs of a plan (DESIGN.md §5): node annotations, the PopRT sharding
// config (YAML), the plan file (protobuf JSON) and the text report.
#ifndef AUTOSHARD_SHARDER_OUTPUTS_EMIT_H_
#define AUTOSHARD_SHARDER_OUTPUTS_EMIT_H_

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

// The report printed on stdout: per IPU nodes, memory by kind (tile-memory
// model), the fullest tile and whether it fits, FLOPs and stage time; then
// totals, the pipeline's bottleneck, throughput, latency and lower bound.
// Warnings are not in it: the CLI prints them on stderr. Plans of more than
// 16 IPUs fold the rows between the IPUs that matter unless `all_ipus`
// (sharder/pod/ipu_rows.h); a plan with a replication adds the POD lines.
std::string ReportText(const proto::Plan& plan, bool all_ipus = false);

// "12.34 MB" (powers of 1000) and "1.23 GFLOPs" figures for reports.
std::string HumanBytesText(double bytes);
std::string HumanFlopsText(double flops);
// "1.234 s", "12.345 ms" or "123.456 us".
std::string HumanSeconds(double s);

}  // namespace autoshard

#endif  // AUTOSHARD_SHARDER_OUTPUTS_EMIT_H_
