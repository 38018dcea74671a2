#include "sharder/inspect_tables.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "costmodel/flops_rules.h"
#include "graph/annotations.h"
#include "graph/tensor_types.h"
#include "sharder/inspect.h"
#include "writers/csv.h"
#include "writers/emit.h"

namespace autoshard {
namespace {

void SetTensor(const std::string& name, const onnx::TypeProto& type,
               const internal::Prepared& p, proto::TensorSummary* out) {
  out->set_name(name);
  out->set_dtype(TypeName(type));
  auto it = p.analysis->tensors.find(name);
  if (it == p.analysis->tensors.end() || !it->second.rank_known) return;
  out->set_rank_known(true);
  for (int64_t d : it->second.dims) out->add_dims(d);
}

// "[8,3,224,224]", "?" for an unknown dim; "[?...]" for an unknown rank.
std::string ShapeText(bool rank_known,
                      const google::protobuf::RepeatedField<int64_t>& dims,
                      const char* separator) {
  if (!rank_known) return "?";
  std::vector<std::string> parts;
  for (int64_t d : dims) parts.push_back(d < 0 ? "?" : absl::StrCat(d));
  return absl::StrJoin(parts, separator);
}

// "8x3x224x224" for `tensor` in `p.analysis->tensors`, "?" where unknown.
std::string TensorShapeText(const internal::Prepared& p,
                            const std::string& tensor) {
  if (tensor.empty()) return "";
  auto it = p.analysis->tensors.find(tensor);
  if (it == p.analysis->tensors.end() || !it->second.rank_known) return "?";
  std::vector<std::string> parts;
  for (int64_t d : it->second.dims)
    parts.push_back(d < 0 ? "?" : absl::StrCat(d));
  return absl::StrJoin(parts, "x");
}

// NodeRow::data_dependent of every node: the nodes whose outputs a dim was
// assumed for, the ops whose output sizes are data, and every node after.
std::vector<bool> DataDependentNodes(const internal::Prepared& p) {
  static const std::set<std::string> kOps = {"NonZero", "NonMaxSuppression",
                                             "Unique", "Compress", "Loop"};
  std::vector<bool> out(p.analysis->dag.num_nodes(), false);
  for (const auto& a : p.shape_assumptions) {
    if (NodeId id = p.analysis->dag.producer_of(a.tensor); id != kNoNode) {
      out[id] = true;
    } else if (NodeId outer = p.analysis->dag.FindNode(
                   a.node.substr(0, a.node.find(" > ")));
               outer != kNoNode) {
      out[outer] = true;  // a body's node: its If/Loop/Scan
    }
  }
  // An If whose outputs' dims are not all known: its branches differ, and
  // the data picks one.
  auto unknown_if = [&](const onnx::NodeProto& node) {
    if (node.op_type() != "If") return false;
    for (const std::string& o : node.output()) {
      auto it = p.analysis->tensors.find(o);
      if (it == p.analysis->tensors.end() || !it->second.IsStatic())
        return true;
    }
    return false;
  };
  for (NodeId id : p.analysis->dag.topological_order()) {
    const onnx::NodeProto& node = p.analysis->dag.node(id);
    bool dependent =
        out[id] || kOps.contains(node.op_type()) || unknown_if(node);
    for (NodeId from : p.analysis->dag.producers(id))
      dependent = dependent || out[from];
    out[id] = dependent;
  }
  return out;
}

}  // namespace

namespace internal {

void AddTensorsAndNodes(const Prepared& p, proto::InspectReport* r) {
  const onnx::GraphProto& g = p.analysis->model->graph();
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  for (const auto& vi : g.input()) {
    if (!initializers.contains(vi.name()))
      SetTensor(vi.name(), vi.type(), p, r->add_inputs());
  }
  for (const auto& vi : g.output()) {
    SetTensor(vi.name(), vi.type(), p, r->add_outputs());
  }
  const double total = std::max(p.analysis->costs.total_flops, 1.0);
  const std::vector<bool> data_dependent = DataDependentNodes(p);
  for (NodeId id = 0; id < p.analysis->dag.num_nodes(); ++id) {
    const onnx::NodeProto& node = p.analysis->dag.node(id);
    const NodeCost& c = p.analysis->costs.nodes[id];
    proto::NodeRow* row = r->add_nodes();
    row->set_name(p.analysis->dag.name(id));
    row->set_op_type(OpLabel(node));
    row->set_flops(c.flops);
    row->set_flops_percent(100.0 * c.flops / total);
    int64_t weights = 0;
    for (int32_t w : p.analysis->costs.node_weights[id])
      weights += p.analysis->costs.weights[w].size_bytes;
    row->set_weight_bytes(weights);
    if (node.output_size() > 0) {
      auto it = p.analysis->tensors.find(node.output(0));
      if (it != p.analysis->tensors.end() && it->second.rank_known) {
        for (int64_t d : it->second.dims) row->add_output_dims(d);
      } else {
        row->add_output_dims(-1);
      }
    }
    for (const std::string& out : node.output())
      row->add_output_shapes(TensorShapeText(p, out));
    row->set_data_dependent(data_dependent[id]);
    absl::StatusOr<int> ipu = PlacementAttr(node, id, kIpuAttribute);
    row->set_ipu(ipu.ok() ? *ipu : -1);
  }
}

std::string TensorsText(const proto::InspectReport& r) {
  std::string out;
  size_t width = 4;
  for (const auto* list : {&r.inputs(), &r.outputs()}) {
    for (const auto& t : *list) width = std::max(width, t.name().size());
  }
  for (const auto& [title, list] :
       {std::pair{"inputs", &r.inputs()}, std::pair{"outputs", &r.outputs()}}) {
    absl::StrAppend(&out, title, ":\n");
    for (const auto& t : *list) {
      absl::StrAppendFormat(&out, "  %-*s  %-8s [%s]\n", width, t.name(),
                            t.dtype(),
                            ShapeText(t.rank_known(), t.dims(), ","));
    }
  }
  return out;
}

}  // namespace internal

std::string NodesText(const proto::InspectReport& r) {
  size_t name_width = 4, op_width = 2;
  for (const auto& n : r.nodes()) {
    name_width = std::max(name_width, n.name().size());
    op_width = std::max(op_width, n.op_type().size());
  }
  std::string out = absl::StrFormat("%-*s  %-*s %12s %7s %11s  %-20s %s\n",
                                    name_width, "node", op_width, "op", "FLOPs",
                                    "%", "weights", "output shape", "IPU");
  for (const auto& n : r.nodes()) {
    absl::StrAppendFormat(
        &out, "%-*s  %-*s %12s %6.2f%% %11s  %-20s %s\n", name_width, n.name(),
        op_width, n.op_type(), HumanFlopsText(n.flops()), n.flops_percent(),
        HumanBytesText(n.weight_bytes()),
        absl::StrCat("[", ShapeText(true, n.output_dims(), ","), "]"),
        n.ipu() < 0 ? "-" : absl::StrCat(n.ipu()));
  }
  return out;
}

std::string NodesCsv(const proto::InspectReport& r) {
  std::string out =
      "name,op_type,flops,flops_percent,weight_bytes,output_shape,ipu,"
      "output_shapes,data_dependent\n";
  for (const auto& n : r.nodes()) {
    absl::StrAppendFormat(
        &out, "%s,%s,%.17g,%.4f,%d,%s,%s,%s,%d\n", CsvField(n.name()),
        CsvField(n.op_type()), n.flops(), n.flops_percent(), n.weight_bytes(),
        ShapeText(true, n.output_dims(), "x"),
        n.ipu() < 0 ? "" : absl::StrCat(n.ipu()),
        absl::StrJoin(n.output_shapes(), ";"), n.data_dependent() ? 1 : 0);
  }
  return out;
}

}  // namespace autoshard
