#include "writers/dot_graph.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "graph/graph.h"
#include "writers/emit.h"
#include "writers/svg.h"

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

Boxes NodeBoxes(const PlanGraph& g, const std::string& prefix) {
  Boxes b;
  for (size_t i = 0; i < g.names.size(); ++i) {
    b.box_of.push_back(static_cast<int32_t>(i));
    b.boxes.push_back(
        {absl::StrCat("n", i),
         absl::StrCat(ShortName(g.names[i], prefix), "\n", g.op_types[i]),
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

Boxes RunBoxes(const PlanGraph& g, int max_runs, const std::string& prefix) {
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
           absl::StrCat(run.size(), run.size() == 1 ? " node\n" : " nodes\n",
                        ShortName(g.names[run.front()], prefix),
                        run.size() > 1
                            ? "\nto " + ShortName(g.names[run.back()], prefix)
                            : "",
                        "\n", CommonOps(g, run)),
           d});
    }
  }
  return b;
}

// The cut tensors one box sends to (or receives from) one other IPU:
// drawn as one stub. Tensors are indices into PlanGraph::tensors.
struct StubGroup {
  int32_t box = 0;
  int other_ipu = 0;
  absl::btree_set<int32_t> tensors;
  int64_t bytes = 0;  // of the distinct tensors
};

// A stub of the picture: hangs from (out) or feeds (in) `box`.
struct Stub {
  int32_t box = 0;
  std::string label;
  bool dashed = false;
};

// "to IPU 2: tensor +2\n1.5 MB": the group's largest tensor, how many more,
// and the bytes of them all.
std::string StubLabel(const PlanGraph& g, const StubGroup& group, bool out,
                      const std::string& prefix) {
  int32_t largest = *group.tensors.begin();
  for (int32_t t : group.tensors) {
    if (g.tensors[t].bytes > g.tensors[largest].bytes) largest = t;
  }
  const size_t more = group.tensors.size() - 1;
  return absl::StrCat(out ? "to" : "from", " IPU ", group.other_ipu, ": ",
                      ShortName(g.tensors[largest].name, prefix, 32),
                      more > 0 ? absl::StrCat(" +", more) : "", "\n",
                      HumanBytesText(static_cast<double>(group.bytes)));
}

// Per IPU, the stubs of `groups` (all out, or all in): the `max_stubs`
// largest groups of the picture each with its own stub, then per pair of
// IPUs one dashed stub "+N tensors" for the rest, on the largest of them.
std::vector<std::vector<Stub>> MakeStubs(const PlanGraph& g, const Boxes& b,
                                         std::vector<StubGroup> groups,
                                         bool out, int max_stubs,
                                         const std::string& prefix) {
  std::stable_sort(
      groups.begin(), groups.end(),
      [](const StubGroup& x, const StubGroup& y) { return x.bytes > y.bytes; });
  std::vector<std::vector<Stub>> stubs(g.num_ipus);
  std::map<std::pair<int, int>, StubGroup> rest;  // (IPU, other IPU)
  for (size_t i = 0; i < groups.size(); ++i) {
    const StubGroup& group = groups[i];
    const int ipu = b.boxes[group.box].ipu;
    if (static_cast<int>(i) < max_stubs) {
      stubs[ipu].push_back(
          {group.box, StubLabel(g, group, out, prefix), false});
      continue;
    }
    auto [it, fresh] = rest.try_emplace({ipu, group.other_ipu}, group);
    if (!fresh)
      it->second.tensors.insert(group.tensors.begin(), group.tensors.end());
  }
  for (auto& [ipus, group] : rest) {
    group.bytes = 0;
    for (int32_t t : group.tensors) group.bytes += g.tensors[t].bytes;
    const size_t n = group.tensors.size();
    stubs[ipus.first].push_back(
        {group.box,
         absl::StrCat(out ? "to" : "from", " IPU ", ipus.second, ": +", n,
                      n == 1 ? " tensor" : " tensors", "\n",
                      HumanBytesText(static_cast<double>(group.bytes))),
         true});
  }
  return stubs;
}

// The DOT lines of IPU d's stubs, numbered from *next.
std::string StubLines(const Boxes& b, const std::vector<Stub>& stubs, bool out,
                      int* next) {
  std::string text;
  for (const Stub& stub : stubs) {
    const std::string id = absl::StrCat(out ? "o" : "i", (*next)++);
    absl::StrAppend(&text, "    ", id,
                    " [shape=note, style=\"filled\", fillcolor=\"#ffffff\", "
                    "color=\"#c0392b\", fontcolor=\"#c0392b\", fontsize=8, "
                    "label=\"",
                    DotEscape(stub.label), "\"];\n    ",
                    out ? b.boxes[stub.box].id : id, " -> ",
                    out ? id : b.boxes[stub.box].id,
                    " [color=\"#c0392b\", penwidth=2",
                    stub.dashed ? ", style=dashed" : "", "];\n");
  }
  return text;
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
  absl::flat_hash_map<std::string, int32_t> cut_index;
  for (const proto::CutTensor& t : plan.cut_tensors()) {
    cut_index[t.tensor()] = static_cast<int32_t>(g.tensors.size());
    g.tensors.push_back({t.tensor(), t.bytes()});
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    g.names.push_back(plan.nodes(i).node());
    g.op_types.push_back(graph.node(i).op_type());
    g.ipu.push_back(
        std::clamp(plan.nodes(i).ipu(), 0, std::max(g.num_ipus - 1, 0)));
    g.topo_position.push_back(dag.topo_position(i));
  }
  for (NodeId c = 0; c < dag.num_nodes(); ++c) {
    // The distinct tensors c reads, by producer.
    std::map<NodeId, PlanGraph::Edge> from;
    absl::flat_hash_set<std::string> seen;
    auto read = [&](const std::string& tensor) {
      const NodeId p = dag.producer_of(tensor);
      if (p == kNoNode || p == c || !seen.insert(tensor).second) return;
      PlanGraph::Edge& e = from[p];
      e.from = p;
      e.to = c;
      if (g.ipu[p] == g.ipu[c]) return;
      auto it = cut_index.find(tensor);
      if (it == cut_index.end()) return;
      e.cut_bytes += g.tensors[it->second].bytes;
      e.cut.push_back(it->second);
    };
    for (const std::string& in : dag.node(c).input()) read(in);
    for (const std::string& in : dag.implicit_inputs(c)) read(in);
    for (auto& [p, e] : from) g.edges.push_back(std::move(e));
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

std::string CommonNamePrefix(const std::vector<std::string>& names) {
  if (names.size() < 2) return "";
  size_t common = names.front().size();
  for (const std::string& name : names) {
    size_t i = 0;
    while (i < common && i < name.size() && name[i] == names.front()[i]) ++i;
    common = i;
  }
  // Back to just after a separator, so no name loses part of a word.
  while (common > 0 && std::string("/._:").find(names.front()[common - 1]) ==
                           std::string::npos) {
    --common;
  }
  // A lone "/" says nothing worth a line in the title.
  return common > 1 ? names.front().substr(0, common) : "";
}

std::string ShortName(const std::string& name, const std::string& prefix,
                      size_t max) {
  std::string text = !prefix.empty() && absl::StartsWith(name, prefix) &&
                             name.size() > prefix.size()
                         ? name.substr(prefix.size())
                         : name;
  if (text.size() <= max || max <= 3) return text;
  return "..." + text.substr(text.size() - (max - 3));
}

std::string PlanDot(const PlanGraph& g, const DotOptions& options) {
  const bool runs = options.detail == GraphDetail::kRuns ||
                    (options.detail == GraphDetail::kAuto &&
                     static_cast<int>(g.names.size()) > options.max_nodes);
  const std::string prefix = CommonNamePrefix(g.names);
  const Boxes b =
      runs ? RunBoxes(g, options.max_runs, prefix) : NodeBoxes(g, prefix);
  std::vector<int64_t> nodes_on(g.num_ipus, 0);
  for (int32_t d : g.ipu) ++nodes_on[d];
  std::string out = absl::StrCat(
      "digraph autoshard {\n  graph [label=\"", DotEscape(g.model), ": ",
      g.names.size(), " nodes on ", g.num_ipus, " IPUs",
      runs ? " (boxes are runs of nodes)" : "",
      prefix.empty()
          ? ""
          : absl::StrCat("; names shown without ", DotEscape(prefix)),
      "\", labelloc=t, fontname=\"Helvetica\", fontsize=14, newrank=true, "
      "rankdir=TB];\n  node [shape=box, style=\"rounded,filled\", "
      "fontname=\"Helvetica\", fontsize=9];\n  edge [color=\"#888888\", "
      "arrowsize=0.6];\n");
  // Edges within an IPU between boxes; cut tensors grouped by the box that
  // sends (receives) them and the IPU they go to (come from).
  std::set<std::pair<int32_t, int32_t>> inside_edges;
  std::map<std::pair<int32_t, int>, StubGroup> sent, received;
  for (const PlanGraph::Edge& e : g.edges) {
    const int32_t from = b.box_of[e.from], to = b.box_of[e.to];
    const int from_ipu = b.boxes[from].ipu, to_ipu = b.boxes[to].ipu;
    if (from_ipu == to_ipu) {
      if (from != to) inside_edges.insert({from, to});
      continue;
    }
    StubGroup& out_group = sent[{from, to_ipu}];
    out_group.box = from;
    out_group.other_ipu = to_ipu;
    StubGroup& in_group = received[{to, from_ipu}];
    in_group.box = to;
    in_group.other_ipu = from_ipu;
    for (int32_t t : e.cut) {
      if (out_group.tensors.insert(t).second)
        out_group.bytes += g.tensors[t].bytes;
      if (in_group.tensors.insert(t).second)
        in_group.bytes += g.tensors[t].bytes;
    }
  }
  std::vector<std::string> inside(g.num_ipus);   // edge lines per IPU
  std::vector<bool> fed(b.boxes.size(), false);  // from a box of its IPU
  for (const auto& [from, to] : inside_edges) {
    absl::StrAppend(&inside[b.boxes[from].ipu], "    ", b.boxes[from].id,
                    " -> ", b.boxes[to].id, ";\n");
    fed[to] = true;
  }
  // An edge between IPUs that copies no cut tensor the plan lists (a
  // tensor the plan does not count) has no stub.
  auto groups = [](const std::map<std::pair<int32_t, int>, StubGroup>& m) {
    std::vector<StubGroup> v;
    for (const auto& [key, group] : m)
      if (!group.tensors.empty()) v.push_back(group);
    return v;
  };
  const std::vector<std::vector<Stub>> out_stubs =
      MakeStubs(g, b, groups(sent), true, options.max_cut_edges, prefix);
  const std::vector<std::vector<Stub>> in_stubs =
      MakeStubs(g, b, groups(received), false, options.max_cut_edges, prefix);
  int next_out = 0, next_in = 0;
  for (int d = 0; d < g.num_ipus; ++d) {
    const std::string colour = IpuColour(d);
    absl::StrAppend(
        &out, "  subgraph cluster_ipu", d,
        " {\n    label=\"\"; style=\"rounded,filled\"; color=\"", colour,
        "\"; fillcolor=\"", Lighten(colour, 0.88), "\";\n", "    t", d,
        " [shape=plaintext, style=\"\", fontsize=12, "
        "label=\"IPU ",
        d, ": ", nodes_on[d], nodes_on[d] == 1 ? " node" : " nodes", "\"];\n");
    for (size_t i = 0; i < b.boxes.size(); ++i) {
      const Box& box = b.boxes[i];
      if (box.ipu != d) continue;
      absl::StrAppend(&out, "    ", box.id, " [label=\"", DotEscape(box.label),
                      "\", fillcolor=\"", Lighten(colour, 0.45), "\"];\n");
      // Every box no box of its IPU feeds hangs under the title, so the
      // IPU is one piece that nothing outside it joins.
      if (!fed[i]) {
        absl::StrAppend(&out, "    t", d, " -> ", box.id, " [style=invis];\n");
      }
    }
    absl::StrAppend(&out, inside[d], StubLines(b, in_stubs[d], false, &next_in),
                    StubLines(b, out_stubs[d], true, &next_out), "  }\n");
  }
  absl::StrAppend(&out, "}\n");
  return out;
}

}  // namespace autoshard
