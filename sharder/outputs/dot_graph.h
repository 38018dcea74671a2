// `--graph FILE.svg|FILE.dot`: the model's graph coloured by IPU, one
// Graphviz cluster per IPU, cut edges labelled with the bytes they copy.
// autoshard writes the DOT text; Graphviz's `dot` (Debian's `graphviz`) lays
// it out as SVG.
//
// Large models are drawn as runs, not nodes: each IPU's nodes in topological
// order, cut into consecutive runs of equal size, one box per run with its
// node count, first and last node and commonest op types; an edge between
// two boxes stands for every edge between their nodes. So a 5,000-node model
// gives about kMaxRuns boxes, not a hairball.
#ifndef AUTOSHARD_SHARDER_OUTPUTS_DOT_GRAPH_H_
#define AUTOSHARD_SHARDER_OUTPUTS_DOT_GRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "onnx/onnx_pb.h"
#include "proto/plan.pb.h"

namespace autoshard {

// What the picture needs of a planned graph; nodes are the main graph's in
// file order (the plan's order).
struct PlanGraph {
  std::string model;  // shown as the picture's title
  int num_ipus = 0;
  std::vector<std::string> names;      // per node (after naming)
  std::vector<std::string> op_types;   // per node
  std::vector<int32_t> ipu;            // per node
  std::vector<int32_t> topo_position;  // per node: index in a topological order
  struct Edge {
    int32_t from = 0, to = 0;  // producer, consumer
    // Bytes of the cut tensors `from` sends `to` (0 on one IPU).
    int64_t cut_bytes = 0;
  };
  std::vector<Edge> edges;  // distinct (from, to), sorted
};

// Builds the PlanGraph of `graph` (the planned model's main graph) and
// `plan`: edges through tensors and outer-scope reads (graph/graph.h), cut
// bytes from plan.cut_tensors. `dag`, when not null, is the DAG of `graph`'s
// nodes (planning's, ModelAnalysis::dag: same nodes in the same order), else
// it is built here. Errors: FailedPrecondition when the plan's node count
// differs from the graph's or the DAG's; InvalidArgument as Graph::Build's.
absl::StatusOr<PlanGraph> MakePlanGraph(const onnx::GraphProto& graph,
                                        const proto::Plan& plan,
                                        const Graph* dag = nullptr);

enum class GraphDetail {
  kAuto,   // nodes up to kMaxNodesDrawn nodes, else runs
  kNodes,  // every node
  kRuns,   // runs of nodes
};

// GraphDetail from "auto", "nodes" or "runs"; InvalidArgument otherwise.
absl::StatusOr<GraphDetail> ParseGraphDetail(absl::string_view text);

inline constexpr int kMaxNodesDrawn = 300;
inline constexpr int kMaxRuns = 120;

struct DotOptions {
  GraphDetail detail = GraphDetail::kAuto;
  int max_nodes = kMaxNodesDrawn;  // kAuto: more nodes are drawn as runs
  // Runs: each IPU gets max(2, max_runs / IPUs) runs at most, of
  // ceil(its nodes / that) nodes each (the last may be shorter).
  int max_runs = kMaxRuns;
  // Cut edges drawn one by one, the largest first; the rest between each
  // pair of IPUs are drawn as one dashed edge "+N edges, B" (Graphviz's
  // layout time grows fast with edges between clusters: ssdlite's 383 cut
  // edges between runs took over 10 minutes).
  int max_cut_edges = 40;
};

// The DOT text: `cluster_ipu<d>` per IPU (label "IPU d: N nodes", the IPU's
// colour, sharder/outputs/svg.h's IpuColour), nodes `n<i>` (label name and
// op type) or runs `r<d>_<j>`, cut edges red with their bytes as label.
std::string PlanDot(const PlanGraph& graph, const DotOptions& options = {});

// Lays `dot` out with Graphviz (`dot -Tsvg`, found on PATH) and returns the
// SVG file's text. Errors: FailedPrecondition when `dot` is not installed
// (saying how to install it); DeadlineExceeded when it runs longer than
// `timeout_s` (it is then killed); Internal when it fails (with its stderr).
absl::StatusOr<std::string> RenderDotSvg(absl::string_view dot,
                                         double timeout_s = 60);

}  // namespace autoshard

#endif  // AUTOSHARD_SHARDER_OUTPUTS_DOT_GRAPH_H_
