// `--graph FILE.svg|.png|.pdf|.dot`: the model's graph coloured by IPU, one
// Graphviz cluster per IPU in pipeline order (IPU 0 leftmost), each cut
// tensor shown as a pair of stubs naming it and its bytes. autoshard writes
// the DOT text; Graphviz's `dot` (Debian's `graphviz`) lays it out as SVG,
// PNG or PDF.
//
// Note [Cut edges as stubs]: an edge between two clusters is not drawn as a
// line. Graphviz's dot orders clusters to cross fewest edges, not by name or
// input order, so with lines RAFT's IPU 6 (fed by IPU 0) was drawn leftmost,
// the lines ran over other IPUs' titles, and laying out 248 edges took 10 s
// (ssdlite's 383 took over 10 minutes). Instead the sender's cluster holds
// "to IPU e: tensor, bytes" and the receiver's "from IPU d: ...", and every
// box no box of its own IPU feeds hangs (invisibly) from its IPU's title, so
// each IPU is one connected piece: dot lays pieces out separately, left to
// right in input order, which is IPU order, in well under a second.
//
// Node names drop the prefix every node name shares (the picture's title
// says which), then, when still long, keep their end: the end holds the
// layer and the op ("layers.11/attn/MatMul"), which a cut in the middle
// would hide.
//
// Large models are drawn as runs, not nodes: each IPU's nodes in topological
// order, cut into consecutive runs of equal size, one box per run with its
// node count, first and last node and commonest op types; an edge between
// two boxes stands for every edge between their nodes. So a 5,000-node model
// gives about kMaxRuns boxes, not a hairball.
#ifndef AUTOSHARD_WRITERS_DOT_GRAPH_H_
#define AUTOSHARD_WRITERS_DOT_GRAPH_H_

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
    // Those cut tensors, as indices into `tensors` (none on one IPU).
    std::vector<int32_t> cut;
  };
  std::vector<Edge> edges;  // distinct (from, to), sorted
  struct Tensor {
    std::string name;
    int64_t bytes = 0;
  };
  std::vector<Tensor> tensors;  // the cut tensors the edges name
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
  // Stubs: the cut tensors a box sends to one IPU (or receives from one)
  // are one stub; the max_cut_edges largest stubs of each side are drawn
  // one by one, the rest between each pair of IPUs as one dashed stub "+N
  // tensors, B" (a picture of 400 named stubs is not read).
  int max_cut_edges = 40;
};

// The DOT text: `cluster_ipu<d>` per IPU in order (the IPU's colour,
// writers/svg.h's IpuColour) holding its title node `t<d>` ("IPU d:
// N nodes"), its nodes `n<i>` (label name and op type) or runs `r<d>_<j>`,
// the edges between them, and its cut stubs: `i<k>` ("from IPU d: tensor
// +more, bytes") and `o<k>` ("to IPU e: ..."), red; see Note [Cut edges as
// stubs].
std::string PlanDot(const PlanGraph& graph, const DotOptions& options = {});

// The longest prefix every one of `names` shares, ending just after a '/',
// '.', '_' or ':' ("" when they share none or one character, or there is
// one name).
std::string CommonNamePrefix(const std::vector<std::string>& names);

// `name` without `prefix` (when it starts with it), then cut to `max`
// characters by dropping its start ("..." + the last max - 3 characters).
std::string ShortName(const std::string& name, const std::string& prefix,
                      size_t max = 40);

// The picture formats Graphviz writes for --graph.
enum class GraphFormat { kSvg, kPng, kPdf };

// Lays `dot` out with Graphviz (`dot -Tsvg|-Tpng|-Tpdf`, found on PATH) and
// returns the file's bytes. Errors: FailedPrecondition when `dot` is not
// installed (saying how to install it); DeadlineExceeded when it runs
// longer than `timeout_s` (it is then killed); Internal when it fails (with
// its stderr).
absl::StatusOr<std::string> RenderDot(absl::string_view dot,
                                      GraphFormat format = GraphFormat::kSvg,
                                      double timeout_s = 60);

}  // namespace autoshard

#endif  // AUTOSHARD_WRITERS_DOT_GRAPH_H_
