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
// proto/*.pb.h and the two small option headers below.
#ifndef AUTOSHARD_SHARDER_AUTOSHARD_H_
#define AUTOSHARD_SHARDER_AUTOSHARD_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "costmodel/precision.h"
#include "graph/shape_options.h"
#include "onnx/onnx_pb.h"
#include "proto/device.pb.h"
#include "proto/plan.pb.h"
#include "proto/problem.pb.h"

namespace autoshard {

// Options::num_ipus for "the smallest power of two whose split fits".
inline constexpr int kAutoIpus = 0;

struct Options {
  // IPUs, 1 .. the node count; kAutoIpus tries 1, 2, 4, ... up to max_ipus
  // and keeps the first plan that fits (else the last), sharing
  // max_search_s over the counts still to try (at least 1 s each).
  int num_ipus = kAutoIpus;
  int max_ipus = 64;  // kAutoIpus: the most IPUs to try
  // "raw": PopRT's bytes-balanced split (DESIGN.md §4.1); "search": raw,
  // then boundary moves until every IPU fits the tile-memory model (§4.2);
  // "optimal": the fastest fitting contiguous slicing of a few topological
  // orders, by dynamic programming (§4.3, sharder/optimal_strategy.h);
  // "auto": raw, search and optimal, then search moves from optimal's split
  // and the ideal DP (sharder/strategies/ideal_dp.h, when the graph's ideals
  // are few), and the best of them (§4.4): a split that fits, then the
  // smallest bottleneck.
  std::string strategy = "auto";
  bool optimal_perf = false;  // search: keep going for the best bottleneck
  int64_t max_candidates = 100000;  // search: splits to evaluate at most
  // Seconds the search may spend at most, and the optimal strategy's DPs
  // again (auto runs both).
  double max_search_s = 60;
  // Seconds the certified bound may take (sharder/bound/certify.h: the
  // ideal DP's relaxation or COIN-OR CBC); 0 turns the solver off and the
  // certified bound is the cheap one (DeviceModel::LowerBound).
  double bound_s = 10;
  // Fill Plan::problem with the problem solved (for --write-problem).
  bool keep_problem = false;
  // search: called about once a second with candidates tried and the
  // closest split's fullest tile (bytes); may be empty.
  std::function<void(int64_t candidates, int64_t best_max_tile_bytes)> progress;
  // search: when not empty, a real compiler judges every candidate (PopRT's
  // way; sharder/compile_oracle.h): run by /bin/sh with {model} replaced by
  // the candidate's path and AUTOSHARD_AVAILABLE_MEMORY_PROPORTION set.
  std::string compile_cmd;
  int jobs = 1;                     // candidates compiled at once
  std::filesystem::path model_dir;  // where the model's external data is
  std::vector<std::string> external_files;  // relative to model_dir
  bool strict_names = false;  // refuse empty/duplicate names (PopRT)
  ShapeOptions shapes;        // --input-shape / --batch-size
  Precision precision = Precision::kFp32;
  // The chip (DESIGN.md §3.2): the default is the built-in Mk2 GC200.
  proto::DeviceProfile device;  // empty: LoadDeviceProfile("ipu2")
  // When > 0, replaces the profile's available memory proportion (0, 1].
  double available_memory_proportion = 0;

  // InvalidArgument for a value out of range, naming the option.
  absl::Status Validate() const;
};

// A sharding point as written in a PopRT sharding config.
struct NamedShardingPoint {
  std::string node;
  int ipu = 0;
  int pipeline_stage = 0;
};

struct Plan {
  proto::Plan proto;  // the plan file's content (see proto/plan.proto)
  // Per node of the main graph in file order.
  std::vector<std::string> node_names;
  std::vector<int> ipu;
  std::vector<int> pipeline_stage;
  // The problem the plan solved (proto/problem.proto), when
  // Options::keep_problem: `autoshard solve` replays it.
  proto::Problem problem;
};

// Plans `model` with `options.strategy`. A plan that does not fit is still a
// plan (Plan::proto.fits is false, out_of_memory says where; with kAutoIpus,
// a warning says no count up to max_ipus fits). Errors: InvalidArgument for
// bad options, a graph with a cycle or a tensor produced twice, strict-name
// violations, an empty graph, or an IPU count the model cannot be split
// into; Internal when the search's time ran out before it started; an error
// of the compile command (search with compile_cmd).
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
