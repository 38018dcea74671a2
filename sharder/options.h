// The options of planning a model (autoshard.h's PlanModel and the CLI's
// `shard`, `apply` and `inspect`, which embed them): a plain struct, each
// field with its unit and sentinel, validated once by Validate().
// Installed beside autoshard.h, so it includes only public headers.
#ifndef AUTOSHARD_SHARDER_OPTIONS_H_
#define AUTOSHARD_SHARDER_OPTIONS_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "costmodel/precision.h"
#include "graph/shape_options.h"
#include "proto/device.pb.h"
#include "solver/strategies/defaults.h"

namespace autoshard {

// Options::num_ipus for "the smallest power of two whose split fits".
inline constexpr int kAutoIpus = 0;

struct Options {
  // IPUs, 1 .. the node count; kAutoIpus tries 1, 2, 4, ... up to max_ipus
  // and keeps the first plan that fits (else the last), sharing
  // max_search_s over the counts still to try (at least 1 s each).
  int num_ipus = kAutoIpus;
  int max_ipus = 256;  // kAutoIpus: the most IPUs to try, 1 .. 1024
  // "raw": PopRT's bytes-balanced split (DESIGN.md §4.1); "search": raw,
  // then boundary moves until every IPU fits the tile-memory model (§4.2);
  // "optimal": the fastest fitting contiguous slicing of a few topological
  // orders, by dynamic programming (§4.3,
  // solver/strategies/optimal_strategy.h); "auto": raw, search and optimal,
  // then search moves from optimal's split, and the best of them (§4.4): a
  // split that fits, then the smallest bottleneck.
  std::string strategy = "auto";
  bool optimal_perf = false;  // search: keep going for the best bottleneck
  // search: splits to evaluate at most.
  int64_t max_candidates = kDefaultMaxCandidates;
  // Seconds the search may spend at most, and the optimal strategy's DPs
  // again (auto runs both).
  double max_search_s = kDefaultMaxSearchSeconds;
  // Seconds the certified bound may take (solver/bound/certify.h: the
  // ideal DP's relaxation or COIN-OR CBC); 0 turns the solver off and the
  // certified bound is the cheap one (DeviceModel::LowerBound).
  double bound_s = 10;
  // Fill Plan::problem with the problem solved (for --write-problem).
  bool keep_problem = false;
  // search: called about once a second with candidates tried and the
  // closest split's fullest tile (bytes); may be empty.
  std::function<void(int64_t candidates, int64_t best_max_tile_bytes)> progress;
  // num_ipus == kAutoIpus: called with each IPU count before it is tried;
  // may be empty.
  std::function<void(int num_ipus)> trying_num_ipus;
  // When not empty, a real compiler judges the split (sharder/oracle/
  // compile_oracle.h): run by /bin/sh with {model} replaced by the
  // candidate's path and AUTOSHARD_AVAILABLE_MEMORY_PROPORTION set. search
  // judges every candidate with it (PopRT's way); the other strategies'
  // chosen split is compiled, then auto's other candidates in order
  // (sharder/compile_judge.h).
  std::string compile_cmd;
  // Pins (issue 31): "NODE=IPU", the node (by name) planned on that IPU
  // (0..63) whatever the strategy; refused (InvalidArgument) when the node
  // is unknown or the IPU is not below the count (solver/strategies/
  // constraints.h).
  std::vector<std::string> pins;
  int jobs = 1;  // candidates compiled at once (with compile_cmd), >= 1
  // Seconds one compile may take before its process group is killed (the
  // candidate then does not fit); a compile also stops when max_search_s
  // runs out. > 0.
  double compile_timeout_s = 1800;
  std::filesystem::path model_dir;  // where the model's external data is
  std::vector<std::string> external_files;  // relative to model_dir
  bool strict_names = false;  // refuse empty/duplicate names (PopRT)
  // Refuse (InvalidArgument) a model whose shapes verdict is not exact:
  // assumed or unresolved dims (proto/plan.proto ShapesVerdict).
  bool strict = false;
  // How the compiler will hold the weights (initializers): "constant"
  // (PopRT's inference default: folded into the program, so one read on
  // two IPUs is simply stored on both) or "variable" (updatable from the
  // host, or training: PopART refuses to copy a variable between IPUs when
  // pipelining, "Can not copy variable tensor ... between virtual graphs
  // when pipelining", willow/src/transforms/pipeline.cpp). With "variable"
  // every reader of a weight runs on one IPU: the planner proposes only
  // such plans (a last stage may return to IPU 0 for it), and `apply` /
  // --keep-placement refuse a placement that breaks the rule.
  std::string weights = "constant";
  // Where the weights live (issue 30; costmodel/weight_location.h, Note
  // [Remote weights]): "on-chip" (every weight resident), "remote" (every
  // weight in Streaming Memory, loaded each step) or "auto" (the default:
  // on-chip when that fits or the device has no Streaming Memory, else the
  // few bytes off-chip (greedy per IPU) that make every stage fit; with
  // --total-ipus, per candidate; Note [Choosing where weights live]). apply,
  // --keep-placement and --write-problem take auto as on-chip.
  std::string weights_location = "auto";
  // Replicas each remote weight is sharded over (replicated tensor
  // sharding), >= 1; PlanPod sets it to the gather group's size.
  int shard_over = 1;
  // How the runtime retrieves the variables, PopXL's retrieval_mode:
  // "one_per_group" or "all_replicas"; written into the plan.
  std::string retrieval_mode = "one_per_group";
  // Evaluate the placement the model carries (__ipu_number and
  // __pipeline_stage on every node, as `apply` evaluates a config) instead
  // of planning; num_ipus and strategy are then not used. Without it, a
  // model that carries one is planned again, with a warning.
  bool keep_placement = false;
  ShapeOptions shapes;  // --input-shape / --batch-size
  Precision precision = Precision::kFp32;
  // The chip (DESIGN.md §3.2): the default is the built-in Mk2 GC200.
  proto::DeviceProfile device;  // empty: LoadDeviceProfile("ipu2")
  // When set, replaces the profile's available memory proportion; in
  // (0, 1].
  std::optional<double> available_memory_proportion;

  // InvalidArgument for a value out of range, naming the CLI flag that sets
  // it (`autoshard shard --help` lists each; tests/usage_cli_test.sh checks
  // that every flag named here exists). The CLI calls it once, before the
  // model is read; PlanModel calls it again for library callers.
  absl::Status Validate() const;
};

}  // namespace autoshard

#endif  // AUTOSHARD_SHARDER_OPTIONS_H_
