// autoshard's public library interface (DESIGN.md §6).
//
// Plan a model: names every node deterministically, fixes input shapes, runs
// shape inference, costs every node, and splits the main graph over IPUs.
// Apply a plan: writes `__ipu_number` and `__pipeline_stage` (INT attributes,
// what PopART/PopRT read) on every node of the main graph.
// Nothing here throws, keeps global state or prints: errors are absl::Status
// with the node and reason, warnings go into Plan::proto.warnings, and the
// search's progress goes to Options::progress when set (else nowhere).
// Calls may run on several threads at once, each on its own arguments
// (sharder/library_test.cc runs 8 at once).
//
// Installed (`cmake --install`) as <autoshard/autoshard.h>, with the headers
// it includes beside it, for a CMake client of find_package(autoshard) and
// target autoshard::autoshard (README.md, tests/install_client/). So it
// includes only public headers: standard, Abseil, ONNX, the generated
// proto/*.pb.h, sharder/options.h and the two small option headers it
// includes.
#ifndef AUTOSHARD_SHARDER_AUTOSHARD_H_
#define AUTOSHARD_SHARDER_AUTOSHARD_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/placement.h"
#include "onnx/onnx_pb.h"
#include "proto/device.pb.h"
#include "proto/plan.pb.h"
#include "proto/problem.pb.h"
#include "sharder/options.h"

namespace autoshard {

struct ModelAnalysis;  // costmodel/model_analysis.h: internal

// A sharding point as written in a PopRT sharding config.
struct NamedShardingPoint {
  std::string node;
  int ipu = 0;
  int pipeline_stage = 0;
};

struct Plan {
  proto::Plan proto;  // the plan file's content (see proto/plan.proto)
  // Per node of the main graph in file order: its name, and where it runs
  // (the strategy's placement as it is, graph/placement.h).
  std::vector<std::string> node_names;
  Placement placement;
  // Per IPU: the seconds of its stage time (proto.ipus(d).stage_time_s) that
  // are cut-tensor copies, as the performance model counts them
  // (DeviceModel::CopySeconds of the bytes it receives, plus of the bytes
  // it sends): what the pictures show, so no writer re-derives them.
  std::vector<double> copy_s;
  // The problem the plan solved (proto/problem.proto), when
  // Options::keep_problem: `autoshard solve` replays it.
  proto::Problem problem;
  // Planning's analysis of the model (the DAG, shapes, costs, constant
  // mask, problem, device models: Note [One analysis per model]), which the
  // outputs read instead of computing it again: set by PlanModel and
  // PlanFromShardingPoints, shared by copies; null for a Plan made otherwise
  // (the outputs then compute what they need themselves).
  std::shared_ptr<const ModelAnalysis> analysis;
};

// Plans `model` with `options.strategy`. A plan that does not fit is still a
// plan (Plan::proto.fits is false, out_of_memory says where; with kAutoIpus,
// a warning says no count up to max_ipus fits). Errors: InvalidArgument for
// bad options, a graph with a cycle or a tensor produced twice, strict-name
// violations, an empty graph, or an IPU count the model cannot be split
// into; InvalidArgument when the search's time ran out before it started; an
// error of the compile command (search with compile_cmd).
absl::StatusOr<Plan> PlanModel(const onnx::ModelProto& model,
                               const Options& options);

// Evaluates a given split: applies `points` with PopRT's semantics (nodes by
// name, after deterministic naming) and costs the result like PlanModel. No
// points put every node on IPU 0 (what a 1-IPU plan's config says), with a
// warning.
// Errors: InvalidArgument naming an unknown node, or a point that is an
// ancestor of a point of an earlier stage.
absl::StatusOr<Plan> PlanFromShardingPoints(
    const onnx::ModelProto& model, const Options& options,
    const std::vector<NamedShardingPoint>& points);

// Names `model`'s nodes as PlanModel did and sets `__ipu_number` and
// `__pipeline_stage` on every node of its main graph (replacing old values).
// Errors: FailedPrecondition when the model is not the one planned (node
// count or names differ).
absl::Status ApplyPlan(const Plan& plan, onnx::ModelProto* model);

// Serialized ModelProto in, annotated serialized ModelProto out, for callers
// built against another protobuf. `plan`, if not null, receives the plan.
absl::StatusOr<std::string> ShardModelBytes(absl::string_view model_bytes,
                                            const Options& options,
                                            Plan* plan = nullptr);

}  // namespace autoshard

#endif  // AUTOSHARD_SHARDER_AUTOSHARD_H_
