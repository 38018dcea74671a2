#include "sharder/outputs/dot_graph.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph/graph.h"
#include "graph/status_macros.h"
#include "sharder/outputs/emit.h"
#include "sharder/outputs/svg.h"

namespace autoshard {
namespace {

// A DOT string literal's content.
std::string DotEscape(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// `text`, cut to `max` characters with "..." in the middle.
std::string Shorten(const std::string& text, size_t max = 40) {
  if (text.size() <= max) return text;
  return text.substr(0, max / 2 - 2) + "..." +
         text.substr(text.size() - (max / 2 - 1));
}

// `colour` (#rrggbb) mixed with white: 0 keeps it, 1 is white.
std::string Lighten(const std::string& colour, double white) {
  int rgb[3];
  for (int i = 0; i < 3; ++i) {
    const int v = std::stoi(colour.substr(1 + 2 * i, 2), nullptr, 16);
    rgb[i] = static_cast<int>(v + (255 - v) * white + 0.5);
  }
  return absl::StrFormat("#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

// A box of the picture: a node or a run of nodes.
struct Box {
  std::string id, label;
  int ipu = 0;
};

// Boxes (one per node, or runs), with box_of[node].
struct Boxes {
  std::vector<Box> boxes;
  std::vector<int32_t> box_of;
};

Boxes NodeBoxes(const PlanGraph& g) {
  Boxes b;
  for (size_t i = 0; i < g.names.size(); ++i) {
    b.box_of.push_back(static_cast<int32_t>(i));
    b.boxes.push_back({absl::StrCat("n", i),
                       absl::StrCat(Shorten(g.names[i]), "\n", g.op_types[i]),
                       g.ipu[i]});
  }
  return b;
}

// "Conv x12, Relu x12, Concat x4": the three commonest op types of `nodes`.
std::string CommonOps(const PlanGraph& g, const std::vector<int32_t>& nodes) {
  std::map<std::string, int> count;
  for (int32_t n : nodes) ++count[g.op_types[n]];
  std::vector<std::pair<int, std::string>> ops;
  for (const auto& [op, c] : count) ops.emplace_back(-c, op);
  std::sort(ops.begin(), ops.end());
  std::vector<std::string> parts;
  for (size_t i = 0; i < ops.size() && i < 3; ++i)
    parts.push_back(absl::StrCat(ops[i].second, " x", -ops[i].first));
  return absl::StrJoin(parts, ", ");
}

Boxes RunBoxes(const PlanGraph& g, int max_runs) {
  std::vector<std::vector<int32_t>> on_ipu(g.num_ipus);
  for (size_t i = 0; i < g.names.size(); ++i) on_ipu[g.ipu[i]].push_back(i);
  const int runs_per_ipu = std::max(2, max_runs / std::max(g.num_ipus, 1));
  Boxes b;
  b.box_of.assign(g.names.size(), 0);
  for (int d = 0; d < g.num_ipus; ++d) {
    std::vector<int32_t>& nodes = on_ipu[d];
    std::sort(nodes.begin(), nodes.end(), [&](int32_t x, int32_t y) {
      return g.topo_position[x] < g.topo_position[y];
    });
    const size_t size = (nodes.size() + runs_per_ipu - 1) / runs_per_ipu;
    for (size_t start = 0, j = 0; start < nodes.size(); start += size, ++j) {
      const std::vector<int32_t> run(
          nodes.begin() + start,
          nodes.begin() + std::min(nodes.size(), start + size));
      for (int32_t n : run) b.box_of[n] = static_cast<int32_t>(b.boxes.size());
      b.boxes.push_back(
          {absl::StrCat("r", d, "_", j),
           absl::StrCat(
               run.size(), run.size() == 1 ? " node\n" : " nodes\n",
               Shorten(g.names[run.front()]),
               run.size() > 1 ? "\n... " + Shorten(g.names[run.back()]) : "",
               "\n", CommonOps(g, run)),
           d});
    }
  }
  return b;
}

// An edge between two boxes standing for `edges` node edges.
struct BoxEdge {
  int32_t from = 0, to = 0;
  int edges = 0;
  int64_t cut_bytes = 0;
};

// The DOT lines of the cut edges: the `max_edges` largest each with its
// bytes, then per (from IPU, to IPU) one dashed edge for the rest, drawn
// where the largest of them is.
std::string CutEdges(const Boxes& b, std::vector<BoxEdge> cut, int max_edges) {
  std::stable_sort(cut.begin(), cut.end(),
                   [](const BoxEdge& x, const BoxEdge& y) {
                     return x.cut_bytes > y.cut_bytes;
                   });
  std::string out;
  std::map<std::pair<int, int>, std::vector<BoxEdge>> rest;
  for (size_t i = 0; i < cut.size(); ++i) {
    const BoxEdge& e = cut[i];
    if (static_cast<int>(i) >= max_edges) {
      rest[{b.boxes[e.from].ipu, b.boxes[e.to].ipu}].push_back(e);
      continue;
    }
    absl::StrAppend(&out, "  ", b.boxes[e.from].id, " -> ", b.boxes[e.to].id,
                    " [color=\"#c0392b\", penwidth=2, fontcolor=\"#c0392b\", "
                    "fontsize=9, label=\"",
                    HumanBytesText(static_cast<double>(e.cut_bytes)), "\"];\n");
  }
  for (const auto& [ipus, edges] : rest) {
    int64_t bytes = 0;
    for (const BoxEdge& e : edges) bytes += e.cut_bytes;
    absl::StrAppend(&out, "  ", b.boxes[edges.front().from].id, " -> ",
                    b.boxes[edges.front().to].id,
                    " [color=\"#c0392b\", style=dashed, fontcolor=\"#c0392b\", "
                    "fontsize=9, label=\"+",
                    edges.size(), " edges, ",
                    HumanBytesText(static_cast<double>(bytes)), "\"];\n");
  }
  return out;
}

}  // namespace

absl::StatusOr<PlanGraph> MakePlanGraph(const onnx::GraphProto& graph,
                                        const proto::Plan& plan,
                                        const Graph* planned_dag) {
  if (graph.node_size() != plan.nodes_size() ||
      (planned_dag != nullptr &&
       planned_dag->num_nodes() != graph.node_size())) {
    return absl::FailedPreconditionError(
        absl::StrCat("the plan places ", plan.nodes_size(),
                     " nodes but the graph has ", graph.node_size()));
  }
  std::optional<Graph> own;
  if (planned_dag == nullptr) {
    ASSIGN_OR_RETURN(own, Graph::Build(graph));
  }
  const Graph& dag = planned_dag != nullptr ? *planned_dag : *own;
  PlanGraph g;
  g.model = plan.model();
  g.num_ipus = plan.num_ipus();
  absl::flat_hash_map<std::string, int64_t> cut_bytes;
  for (const proto::CutTensor& t : plan.cut_tensors())
    cut_bytes[t.tensor()] = t.bytes();
  for (int i = 0; i < graph.node_size(); ++i) {
    g.names.push_back(plan.nodes(i).node());
    g.op_types.push_back(graph.node(i).op_type());
    g.ipu.push_back(
        std::clamp(plan.nodes(i).ipu(), 0, std::max(g.num_ipus - 1, 0)));
    g.topo_position.push_back(dag.topo_position(i));
  }
  for (NodeId c = 0; c < dag.num_nodes(); ++c) {
    // The distinct tensors c reads, by producer.
    std::map<NodeId, int64_t> bytes_from;
    absl::flat_hash_set<std::string> seen;
    auto read = [&](const std::string& tensor) {
      const NodeId p = dag.producer_of(tensor);
      if (p == kNoNode || p == c || !seen.insert(tensor).second) return;
      int64_t& b = bytes_from[p];
      if (g.ipu[p] != g.ipu[c]) {
        auto it = cut_bytes.find(tensor);
        if (it != cut_bytes.end()) b += it->second;
      }
    };
    for (const std::string& in : dag.node(c).input()) read(in);
    for (const std::string& in : dag.implicit_inputs(c)) read(in);
    for (const auto& [p, b] : bytes_from) g.edges.push_back({p, c, b});
  }
  std::sort(g.edges.begin(), g.edges.end(),
            [](const PlanGraph::Edge& x, const PlanGraph::Edge& y) {
              return std::pair(x.from, x.to) < std::pair(y.from, y.to);
            });
  return g;
}

absl::StatusOr<GraphDetail> ParseGraphDetail(absl::string_view text) {
  if (text == "auto") return GraphDetail::kAuto;
  if (text == "nodes") return GraphDetail::kNodes;
  if (text == "runs") return GraphDetail::kRuns;
  return absl::InvalidArgumentError(absl::StrCat(
      "--graph-detail must be auto, nodes or runs, got '", text, "'"));
}

std::string PlanDot(const PlanGraph& g, const DotOptions& options) {
  const bool runs = options.detail == GraphDetail::kRuns ||
                    (options.detail == GraphDetail::kAuto &&
                     static_cast<int>(g.names.size()) > options.max_nodes);
  const Boxes b = runs ? RunBoxes(g, options.max_runs) : NodeBoxes(g);
  std::vector<int64_t> nodes_on(g.num_ipus, 0);
  for (int32_t d : g.ipu) ++nodes_on[d];
  std::string out = absl::StrCat(
      "digraph autoshard {\n  graph [label=\"", DotEscape(g.model), ": ",
      g.names.size(), " nodes on ", g.num_ipus, " IPUs",
      runs ? " (boxes are runs of nodes)" : "",
      "\", labelloc=t, fontname=\"Helvetica\", fontsize=14, newrank=true, "
      "rankdir=TB];\n  node [shape=box, style=\"rounded,filled\", "
      "fontname=\"Helvetica\", fontsize=9];\n  edge [color=\"#888888\", "
      "arrowsize=0.6];\n");
  for (int d = 0; d < g.num_ipus; ++d) {
    const std::string colour = IpuColour(d);
    absl::StrAppend(&out, "  subgraph cluster_ipu", d, " {\n    label=\"IPU ",
                    d, ": ", nodes_on[d], nodes_on[d] == 1 ? " node" : " nodes",
                    "\"; style=\"rounded,filled\"; color=\"", colour,
                    "\"; fillcolor=\"", Lighten(colour, 0.88),
                    "\"; fontname=\"Helvetica\";\n");
    for (const Box& box : b.boxes) {
      if (box.ipu != d) continue;
      absl::StrAppend(&out, "    ", box.id, " [label=\"", DotEscape(box.label),
                      "\", fillcolor=\"", Lighten(colour, 0.45), "\"];\n");
    }
    absl::StrAppend(&out, "  }\n");
  }
  // Edges between boxes: how many node edges each stands for, cut bytes.
  std::map<std::pair<int32_t, int32_t>, std::pair<int, int64_t>> box_edges;
  for (const PlanGraph::Edge& e : g.edges) {
    const int32_t from = b.box_of[e.from], to = b.box_of[e.to];
    if (from == to) continue;
    auto& [count, bytes] = box_edges[{from, to}];
    ++count;
    bytes += e.cut_bytes;
  }
  std::vector<BoxEdge> cut;
  for (const auto& [ends, figures] : box_edges) {
    const BoxEdge e{ends.first, ends.second, figures.first, figures.second};
    if (b.boxes[e.from].ipu == b.boxes[e.to].ipu) {
      absl::StrAppend(&out, "  ", b.boxes[e.from].id, " -> ", b.boxes[e.to].id,
                      ";\n");
    } else {
      cut.push_back(e);
    }
  }
  absl::StrAppend(&out, CutEdges(b, std::move(cut), options.max_cut_edges));
  absl::StrAppend(&out, "}\n");
  return out;
}

}  // namespace autoshard
