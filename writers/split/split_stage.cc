// The stages of a split: each stage's model and the manifest (Note
// [Splitting an annotated model] in split.h).
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/annotations.h"
#include "graph/tensor_types.h"
#include "writers/split/splitter.h"

namespace autoshard::split_internal {
namespace {

namespace fs = std::filesystem;

constexpr char kGraphInput[] = "graph_input";

template <typename Message>
void SetDims(const onnx::TypeProto& type, Message* out) {
  out->set_type(TypeName(type));
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return;
  for (const auto& d : type.tensor_type().shape().dim()) {
    out->add_dims(d.has_dim_value()   ? absl::StrCat(d.dim_value())
                  : d.has_dim_param() ? d.dim_param()
                                      : "?");
  }
}

}  // namespace

absl::StatusOr<Splitter::CutType> Splitter::CutTypeFor(const std::string& t) {
  CutType c;
  for (const auto& o : g_.output()) {
    if (o.name() == t && IsCompleteType(o.type())) {
      c.type = o.type();
      return c;
    }
  }
  auto it = types_->find(t);
  if (it != types_->end() && IsCompleteType(it->second)) {
    c.type = it->second;
    return c;
  }
  if (it != types_->end() && it->second.has_tensor_type() &&
      it->second.tensor_type().elem_type() != 0) {
    if (DefaultOpset() < 5) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cut tensor '", t,
          "' has a rank known only at run time, so it is sent flattened "
          "with its shape, which needs Reshape of opset 5 or later; the "
          "model imports opset ",
          DefaultOpset()));
    }
    c.type = it->second;
    c.type.mutable_tensor_type()->clear_shape();
    c.reshaped = true;
    c.data = FreshName(t + "__autoshard_data");
    c.shape = FreshName(t + "__autoshard_shape");
    return c;
  }
  const NodeId p = dag_.producer_of(t);
  return absl::InvalidArgumentError(absl::StrCat(
      "cut tensor '", t, "' (output of node ",
      p == kNoNode ? std::string("?") : NodeLabel(dag_.node(p), p),
      ") has no known element type: neither ONNX 1.12's shape inference "
      "nor autoshard's rules (graph/tensor_types.h) can tell, and a "
      "model's inputs and outputs need one"));
}

std::string Splitter::FreshName(const std::string& base) {
  if (names_.empty()) {
    for (const auto& vi : g_.input()) names_.insert(vi.name());
    for (const auto& t : g_.initializer()) names_.insert(t.name());
    for (const auto& node : g_.node()) {
      names_.insert(node.name());
      for (const auto& o : node.output()) names_.insert(o);
    }
  }
  std::string name = base;
  for (int k = 1; names_.contains(name); ++k) name = absl::StrCat(base, "_", k);
  names_.insert(name);
  return name;
}

absl::StatusOr<const Splitter::CutType*> Splitter::Cut(const std::string& t) {
  auto it = cut_types_.find(t);
  if (it == cut_types_.end()) {
    ASSIGN_OR_RETURN(CutType c, CutTypeFor(t));
    if (!c.type.has_tensor_type()) {
      warnings_->push_back(absl::StrCat(
          "cut tensor '", t, "' is a ", TypeName(c.type),
          ", not a tensor: runtimes that pass only tensors between stages "
          "(onnxruntime-node, PopART) cannot chain these stages"));
    }
    it = cut_types_.emplace(t, std::move(c)).first;
  }
  return &it->second;
}

onnx::TypeProto Splitter::Rank1(int32_t elem) {
  onnx::TypeProto type;
  type.mutable_tensor_type()->set_elem_type(elem);
  type.mutable_tensor_type()->mutable_shape()->add_dim();
  return type;
}

void Splitter::CopyModelFields(int s, onnx::ModelProto* out) const {
  out->set_ir_version(model_.ir_version());
  *out->mutable_opset_import() = model_.opset_import();
  out->set_producer_name(model_.producer_name());
  out->set_producer_version(model_.producer_version());
  out->set_domain(model_.domain());
  out->set_model_version(model_.model_version());
  out->set_doc_string(model_.doc_string());
  *out->mutable_metadata_props() = model_.metadata_props();
  *out->mutable_functions() = model_.functions();
  out->mutable_graph()->set_name(absl::StrCat(g_.name(), "_stage", s));
  out->mutable_graph()->set_doc_string(g_.doc_string());
}

int64_t Splitter::DefaultOpset() const {
  for (const auto& o : model_.opset_import()) {
    if (IsDefaultDomain(o.domain())) return o.version();
  }
  return 0;
}

onnx::NodeProto Splitter::ReshapeNode(const std::string& name,
                                      const std::string& data,
                                      const std::string& shape,
                                      const std::string& out) const {
  onnx::NodeProto node;
  node.set_name(name);
  node.set_op_type("Reshape");
  node.add_input(data);
  node.add_input(shape);
  node.add_output(out);
  if (DefaultOpset() >= 14) {
    auto* a = node.add_attribute();
    a->set_name("allowzero");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(1);
  }
  return node;
}

absl::Status Splitter::BuildStage(int s, onnx::ModelProto* out,
                                  proto::SplitStage* entry) {
  CopyModelFields(s, out);
  StageParts parts{s, out->mutable_graph(), entry};
  entry->set_stage(s);
  entry->set_ipu(stage_ipu_[s]);
  entry->set_file(StageFileName(s));

  int copied = 0;
  for (NodeId id : stage_nodes_[s]) {
    for (const auto& o : dag_.node(id).output()) {
      if (!o.empty()) parts.produced.insert(o);
    }
    if (stage_[id] != s) ++copied;
  }
  entry->set_num_nodes(static_cast<int>(stage_nodes_[s].size()));
  entry->set_copied_constant_nodes(copied);

  RETURN_IF_ERROR(AddStageInputs(&parts));
  AddStageNodes(parts);
  std::vector<std::string> outputs = StageOutputs(&parts);
  RETURN_IF_ERROR(AddStageOutputs(outputs, &parts));
  AddStageRecords(parts);
  return absl::OkStatus();
}

absl::Status Splitter::AddStageInputs(StageParts* parts) {
  const int s = parts->s;
  onnx::GraphProto* g = parts->g;
  proto::SplitStage* entry = parts->entry;
  const absl::flat_hash_set<std::string>& produced = parts->produced;
  std::set<std::string>& weights = parts->weights;
  // What the stage reads from outside: graph inputs (by position),
  // initializers, cut tensors (by producer position).
  std::set<int> inputs;
  std::set<std::pair<int32_t, std::string>> cuts;
  for (NodeId id : stage_nodes_[s]) {
    for (const std::string& t : Reads(id)) {
      if (produced.contains(t)) continue;
      if (initializers_.contains(t) || sparse_initializers_.contains(t)) {
        weights.insert(t);
        if (auto it = input_index_.find(t); it != input_index_.end()) {
          inputs.insert(it->second);
        }
      } else if (auto it = input_index_.find(t); it != input_index_.end()) {
        inputs.insert(it->second);
      } else if (NodeId p = dag_.producer_of(t); p != kNoNode) {
        cuts.insert({dag_.topo_position(p), t});
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            "node ", NodeLabel(dag_.node(id), id), " reads '", t,
            "', which no node, graph input or initializer provides"));
      }
    }
  }
  for (int i : inputs) {
    *g->add_input() = g_.input(i);
    if (initializers_.contains(g_.input(i).name()) ||
        sparse_initializers_.contains(g_.input(i).name())) {
      continue;
    }
    proto::SplitStageInput* in = entry->add_inputs();
    in->set_name(g_.input(i).name());
    SetDims(g_.input(i).type(), in);
    in->set_source(kGraphInput);
  }
  auto add_input = [&](const std::string& name, const onnx::TypeProto& type,
                       const std::string& source, const std::string& carries) {
    onnx::ValueInfoProto* vi = g->add_input();
    vi->set_name(name);
    *vi->mutable_type() = type;
    proto::SplitStageInput* in = entry->add_inputs();
    in->set_name(name);
    SetDims(type, in);
    in->set_source(absl::StrCat(source, ":", name));
    if (!carries.empty()) in->set_carries(carries);
  };
  for (const auto& [position, t] : cuts) {
    ASSIGN_OR_RETURN(const CutType* c, Cut(t));
    const std::string from = absl::StrCat(stage_[dag_.producer_of(t)]);
    if (!c->reshaped) {
      add_input(t, c->type, from, "");
      continue;
    }
    add_input(c->data, Rank1(c->type.tensor_type().elem_type()), from,
              "data:" + t);
    add_input(c->shape, Rank1(onnx::TensorProto::INT64), from, "shape:" + t);
    *g->add_node() = ReshapeNode(FreshName("autoshard_unflatten_" + t), c->data,
                                 c->shape, t);
  }
  return absl::OkStatus();
}

void Splitter::AddStageNodes(const StageParts& parts) {
  const int s = parts.s;
  onnx::GraphProto* g = parts.g;
  for (NodeId id : stage_nodes_[s]) {
    onnx::NodeProto* node = g->add_node();
    *node = g_.node(id);  // the model's, not the DAG's copy
    auto* attrs = node->mutable_attribute();
    attrs->erase(std::remove_if(attrs->begin(), attrs->end(),
                                [](const onnx::AttributeProto& a) {
                                  return a.name() == kIpuAttribute ||
                                         a.name() == kStageAttribute;
                                }),
                 attrs->end());
  }
}

std::vector<std::string> Splitter::StageOutputs(StageParts* parts) {
  const int s = parts->s;
  std::set<std::string>& weights = parts->weights;
  // Outputs: the graph outputs it produces (one that is an initializer
  // comes out of stage 0), then the cut tensors later stages read.
  std::vector<std::string> outputs;
  for (const auto& o : g_.output()) {
    const NodeId p = dag_.producer_of(o.name());
    const bool ours = p != kNoNode
                          ? stage_[p] == s
                          : s == 0 && initializers_.contains(o.name()) &&
                                !input_index_.contains(o.name());
    if (!ours) continue;
    if (p == kNoNode) weights.insert(o.name());
    outputs.push_back(o.name());
  }
  auto add_once = [&outputs](const std::string& t) {
    if (std::find(outputs.begin(), outputs.end(), t) == outputs.end()) {
      outputs.push_back(t);
    }
  };
  for (NodeId id : stage_nodes_[s]) {
    if (((*is_constant_)[id] && !pinned_[id]) || stage_[id] != s) continue;
    for (const auto& t : dag_.node(id).output()) {
      auto it = readers_.find(t);
      if (t.empty() || it == readers_.end()) continue;
      if (it->second.upper_bound(s) == it->second.end()) continue;
      add_once(t);
    }
  }
  if (outputs.empty()) {
    // Nothing later reads what the stage computes (Note [A stage of
    // constants]): it outputs its own nodes' results that no node of it
    // reads, so that it still runs (onnxruntime runs no model without
    // outputs).
    absl::flat_hash_set<std::string> read_here;
    for (NodeId id : stage_nodes_[s]) {
      for (const std::string& t : Reads(id)) read_here.insert(t);
    }
    for (NodeId id : stage_nodes_[s]) {
      if (stage_[id] != s) continue;
      for (const auto& t : dag_.node(id).output()) {
        if (!t.empty() && !read_here.contains(t)) add_once(t);
      }
    }
  }
  return outputs;
}

absl::Status Splitter::AddStageOutputs(const std::vector<std::string>& outputs,
                                       StageParts* parts) {
  const int s = parts->s;
  onnx::GraphProto* g = parts->g;
  proto::SplitStage* entry = parts->entry;
  std::string minus_one;  // the [-1] shape that flattens, when needed
  for (const std::string& t : outputs) {
    auto add_output = [&](const std::string& name,
                          const onnx::ValueInfoProto& vi,
                          const std::string& carries, bool read) {
      *g->add_output() = vi;
      proto::SplitStageOutput* o = entry->add_outputs();
      o->set_name(name);
      SetDims(vi.type(), o);
      o->set_model_output(graph_outputs_.contains(name));
      if (!carries.empty()) o->set_carries(carries);
      if (auto it = readers_.find(t); read && it != readers_.end()) {
        for (auto r = it->second.upper_bound(s); r != it->second.end(); ++r) {
          o->add_read_by(*r);
        }
      }
    };
    auto declared = std::find_if(
        g_.output().begin(), g_.output().end(),
        [&t](const onnx::ValueInfoProto& o) { return o.name() == t; });
    if (declared != g_.output().end()) {
      // A graph output later stages read as a flattened cut tensor is
      // output both ways: itself, for the model, and its data and shape,
      // for the readers (and only those two list the readers).
      const auto readers = readers_.find(t);
      bool flattened = false;
      if (readers != readers_.end() &&
          readers->second.upper_bound(s) != readers->second.end()) {
        ASSIGN_OR_RETURN(const CutType* c, Cut(t));
        flattened = c->reshaped;
      }
      add_output(t, *declared, "", !flattened);
      if (!flattened) continue;
    }
    ASSIGN_OR_RETURN(const CutType* c, Cut(t));
    onnx::ValueInfoProto vi;
    if (!c->reshaped) {
      vi.set_name(t);
      *vi.mutable_type() = c->type;
      add_output(t, vi, "", true);
      continue;
    }
    if (minus_one.empty()) {
      // A Constant node, not an initializer (IR version 3 would want every
      // initializer among the inputs).
      minus_one = FreshName("autoshard_flat_shape");
      onnx::NodeProto* constant = g->add_node();
      constant->set_name(minus_one);
      constant->set_op_type("Constant");
      constant->add_output(minus_one);
      onnx::AttributeProto* value = constant->add_attribute();
      value->set_name("value");
      value->set_type(onnx::AttributeProto::TENSOR);
      value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
      value->mutable_t()->add_dims(1);
      value->mutable_t()->add_int64_data(-1);
    }
    onnx::NodeProto* shape = g->add_node();
    shape->set_name(FreshName("autoshard_shape_" + t));
    shape->set_op_type("Shape");
    shape->add_input(t);
    shape->add_output(c->shape);
    *g->add_node() =
        ReshapeNode(FreshName("autoshard_flatten_" + t), t, minus_one, c->data);
    vi.set_name(c->data);
    *vi.mutable_type() = Rank1(c->type.tensor_type().elem_type());
    add_output(c->data, vi, "data:" + t, true);
    vi.set_name(c->shape);
    *vi.mutable_type() = Rank1(onnx::TensorProto::INT64);
    add_output(c->shape, vi, "shape:" + t, true);
  }
  return absl::OkStatus();
}

void Splitter::AddStageRecords(const StageParts& parts) {
  onnx::GraphProto* g = parts.g;
  const absl::flat_hash_set<std::string>& produced = parts.produced;
  const std::set<std::string>& weights = parts.weights;
  for (const std::string& w : weights) {
    if (auto it = initializers_.find(w); it != initializers_.end()) {
      *g->add_initializer() = *it->second;
    } else {
      *g->add_sparse_initializer() = *sparse_initializers_.at(w);
    }
  }
  // The model's records for what the stage computes inside.
  std::set<std::string> interface;
  for (const auto& vi : g->input()) interface.insert(vi.name());
  for (const auto& vi : g->output()) interface.insert(vi.name());
  for (const auto& vi : g_.value_info()) {
    if (produced.contains(vi.name()) && !interface.contains(vi.name())) {
      *g->add_value_info() = vi;
    }
  }
  for (const auto& qa : g_.quantization_annotation()) {
    const std::string& t = qa.tensor_name();
    if (produced.contains(t) || interface.contains(t) || weights.count(t)) {
      *g->add_quantization_annotation() = qa;
    }
  }
}

void Splitter::FillManifest(const std::set<std::string>& data_files,
                            proto::SplitManifest* m) const {
  m->set_format("autoshard-split");
  m->set_format_version(1);
  for (const auto& vi : g_.input()) {
    if (initializers_.contains(vi.name()) ||
        sparse_initializers_.contains(vi.name())) {
      continue;
    }
    proto::SplitTensor* in = m->add_inputs();
    in->set_name(vi.name());
    SetDims(vi.type(), in);
  }
  for (const auto& vi : g_.output()) {
    proto::SplitModelOutput* out = m->add_outputs();
    out->set_name(vi.name());
    SetDims(vi.type(), out);
    const NodeId p = dag_.producer_of(vi.name());
    out->set_source(p != kNoNode ? absl::StrCat(stage_[p], ":", vi.name())
                    : input_index_.contains(vi.name())
                        ? std::string(kGraphInput)
                        : absl::StrCat("0:", vi.name()));
  }
  for (const std::string& f : data_files) m->add_data_files(f);
}

}  // namespace autoshard::split_internal
