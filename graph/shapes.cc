#include "graph/shapes.h"

#include <climits>
#include <cstdint>
#include <exception>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/step_counts.h"
#include "graph/batch_axis.h"
#include "graph/onnx_guard.h"
#include "graph/onnx_inference.h"
#include "onnx/shape_inference/implementation.h"

namespace autoshard {

bool TensorInfo::IsStatic() const {
  if (!rank_known) return false;
  for (int64_t d : dims) {
    if (d < 0) return false;
  }
  return true;
}

int64_t TensorInfo::NumElementsOr1() const {
  int64_t n = 1;
  for (int64_t d : dims) n = SaturatingMul(n, d < 0 ? 1 : d);
  return n;
}

int64_t ElementSizeBytes(int32_t elem_type) {
  using T = onnx::TensorProto;
  switch (elem_type) {
    case T::BOOL:
    case T::INT8:
    case T::UINT8:
      return 1;
    case T::INT16:
    case T::UINT16:
    case T::FLOAT16:
    case T::BFLOAT16:
      return 2;
    case T::INT32:
    case T::UINT32:
    case T::FLOAT:
      return 4;
    case T::INT64:
    case T::UINT64:
    case T::DOUBLE:
    case T::COMPLEX64:
      return 8;
    case T::COMPLEX128:
      return 16;
    default:
      // STRING, UNDEFINED and types newer than ONNX 1.12 (float8, int4:
      // at most one byte an element).
      return elem_type > T::BFLOAT16 ? 1 : 0;
  }
}

namespace {

void SetDims(const std::vector<int64_t>& dims, onnx::TensorShapeProto* shape) {
  shape->clear_dim();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

bool HasTensorShape(const onnx::ValueInfoProto& vi) {
  return vi.type().has_tensor_type() && vi.type().tensor_type().has_shape();
}

}  // namespace

TensorInfo TensorInfoFromType(const onnx::TypeProto& type) {
  TensorInfo info;
  if (!type.has_tensor_type()) {
    info.non_tensor = type.value_case() != onnx::TypeProto::VALUE_NOT_SET;
    return info;
  }
  const auto& tt = type.tensor_type();
  info.elem_type = tt.elem_type();
  if (!tt.has_shape()) return info;
  info.rank_known = true;
  for (const auto& d : tt.shape().dim()) {
    info.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  return info;
}

void SetTensorType(const TensorInfo& info, onnx::TypeProto* type) {
  onnx::TypeProto_Tensor* tt = type->mutable_tensor_type();
  if (info.elem_type != 0) tt->set_elem_type(info.elem_type);
  if (!info.rank_known) return;
  onnx::TensorShapeProto* shape = tt->mutable_shape();
  const bool same_rank =
      shape->dim_size() == static_cast<int>(info.dims.size());
  onnx::TensorShapeProto out;
  for (size_t i = 0; i < info.dims.size(); ++i) {
    onnx::TensorShapeProto::Dimension* d = out.add_dim();
    if (info.dims[i] >= 0) {
      d->set_dim_value(info.dims[i]);
    } else if (same_rank) {
      *d = shape->dim(static_cast<int>(i));
    }
  }
  *shape = std::move(out);
}

namespace {

// --dim NAME=VALUE: sets every dim of `symbolic` named NAME. Errors name
// the option and the symbolic names the inputs have.
absl::Status SetNamedDims(
    const std::map<std::string, int64_t>& dims,
    const std::vector<
        std::pair<onnx::TensorShapeProto_Dimension*, std::string>>& symbolic) {
  for (const auto& [name, value] : dims) {
    if (value < 0) {  // 0 is a dim ONNX allows: an empty KV cache
      return absl::InvalidArgumentError(
          absl::StrCat("--dim ", name, "=", value, ": must be at least 0"));
    }
    bool found = false;
    std::set<std::string> names;
    for (const auto& [dim, param] : symbolic) {
      names.insert(param);
      if (param != name) continue;
      dim->set_dim_value(value);
      found = true;
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--dim ", name, ": no graph input has a dim named '", name,
          "' (symbolic dims: ",
          names.empty() ? "none" : absl::StrJoin(names, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

std::string OverrideText(const std::string& input, int dim, int64_t from,
                         int64_t to) {
  return absl::StrCat(input, "[", dim, "] ", from, " -> ", to);
}

// --batch-size on a model without a symbolic first dim: the model's static
// batch is the first dim of its first input of rank >= 2 (initializers
// listed as inputs, and inputs --input-shape sets, do not count); every such
// input whose first dim has that value takes options.batch_size.
void SetStaticBatch(const ShapeOptions& options, onnx::GraphProto* graph,
                    InputShapeChanges* changes) {
  std::set<std::string> initializers;
  for (const auto& t : graph->initializer()) initializers.insert(t.name());
  int64_t batch = 0;
  for (auto& vi : *graph->mutable_input()) {
    if (!HasTensorShape(vi) || initializers.contains(vi.name()) ||
        options.input_shapes.contains(vi.name()) ||
        changes->without_batch_axis.contains(vi.name())) {
      continue;
    }
    auto* shape = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() < 2 || !shape->dim(0).has_dim_value()) continue;
    if (batch == 0) batch = shape->dim(0).dim_value();
    if (shape->dim(0).dim_value() != batch) continue;
    ++changes->batched;
    if (batch == options.batch_size) continue;
    changes->overridden.push_back(
        OverrideText(vi.name(), 0, batch, options.batch_size));
    shape->mutable_dim(0)->set_dim_value(options.batch_size);
  }
}

// Drops the shapes `graph` records for tensors other than its inputs
// (value_info, the outputs' dims; element types stay): they were inferred
// from input shapes that an option has replaced.
void ForgetRecordedShapes(onnx::GraphProto* graph) {
  graph->clear_value_info();
  for (auto& vi : *graph->mutable_output()) {
    if (vi.type().has_tensor_type()) {
      vi.mutable_type()->mutable_tensor_type()->clear_shape();
    }
  }
}

// Sets the input `name` to `dims` (--input-shape), listing the static dims
// it replaces. Errors: not an input, a non-positive dim, another rank, not
// a tensor.
absl::Status SetInputShape(const std::string& name,
                           const std::vector<int64_t>& dims,
                           onnx::GraphProto* graph,
                           InputShapeChanges* changes) {
  onnx::ValueInfoProto* input = nullptr;
  for (auto& vi : *graph->mutable_input()) {
    if (vi.name() == name) input = &vi;
  }
  if (input == nullptr) {
    std::vector<std::string> names;
    for (const auto& vi : graph->input()) names.push_back(vi.name());
    return absl::InvalidArgumentError(absl::StrCat(
        "--input-shape names '", name,
        "', which is not a graph input (inputs: ", absl::StrJoin(names, ", "),
        ")"));
  }
  for (int64_t d : dims) {
    if (d <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-shape ", name, ": every dim must be positive"));
    }
  }
  if (HasTensorShape(*input) &&
      input->type().tensor_type().shape().dim_size() !=
          static_cast<int>(dims.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("--input-shape ", name, " has rank ", dims.size(),
                     " but the model's input has rank ",
                     input->type().tensor_type().shape().dim_size()));
  }
  if (!input->type().has_tensor_type()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--input-shape ", name, ": input is not a tensor"));
  }
  if (HasTensorShape(*input)) {
    const auto& shape = input->type().tensor_type().shape();
    for (int i = 0; i < shape.dim_size(); ++i) {
      if (shape.dim(i).has_dim_value() && shape.dim(i).dim_value() != dims[i]) {
        changes->overridden.push_back(
            OverrideText(name, i, shape.dim(i).dim_value(), dims[i]));
      }
    }
  }
  SetDims(dims, input->mutable_type()->mutable_tensor_type()->mutable_shape());
  return absl::OkStatus();
}

using SymbolicDims =
    std::vector<std::pair<onnx::TensorShapeProto_Dimension*, std::string>>;

// The inputs' symbolic dims, with their names.
SymbolicDims FindSymbolicDims(onnx::GraphProto* graph) {
  SymbolicDims symbolic;
  for (auto& vi : *graph->mutable_input()) {
    if (!HasTensorShape(vi)) continue;
    for (auto& d : *vi.mutable_type()
                        ->mutable_tensor_type()
                        ->mutable_shape()
                        ->mutable_dim()) {
      if (!d.has_dim_value() && d.has_dim_param()) {
        symbolic.emplace_back(&d, d.dim_param());
      }
    }
  }
  return symbolic;
}

// --batch-size: symbolic first dims, else the model's static batch.
void SetBatch(const ShapeOptions& options, onnx::GraphProto* graph,
              InputShapeChanges* changes) {
  for (auto& vi : *graph->mutable_input()) {
    if (!HasTensorShape(vi) || options.input_shapes.contains(vi.name()) ||
        changes->without_batch_axis.contains(vi.name())) {
      continue;
    }
    auto* shape = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() > 0 && !shape->dim(0).has_dim_value()) {
      shape->mutable_dim(0)->set_dim_value(options.batch_size);
      ++changes->batched;
    }
  }
  if (changes->batched == 0) SetStaticBatch(options, graph, changes);
}

// --batch-size above 1 that set no input while an input has no batch axis
// (it would have taken it): refused with the node that adds the axis.
absl::Status CheckBatchAxis(const ShapeOptions& options,
                            const onnx::GraphProto& graph,
                            const InputShapeChanges& changes) {
  if (options.batch_size <= 1 || changes.batched > 0) return absl::OkStatus();
  for (const auto& vi : graph.input()) {
    auto it = changes.without_batch_axis.find(vi.name());
    if (it == changes.without_batch_axis.end() ||
        options.input_shapes.contains(vi.name())) {
      continue;
    }
    std::vector<std::string> dims;
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      dims.push_back(d.has_dim_value()       ? absl::StrCat(d.dim_value())
                     : d.dim_param().empty() ? "?"
                                             : d.dim_param());
    }
    return absl::InvalidArgumentError(
        absl::StrCat("--batch-size ", options.batch_size, ": input '",
                     vi.name(), "' [", absl::StrJoin(dims, ","),
                     "] has no batch axis: the graph adds one at "
                     "node '",
                     it->second,
                     "' (Unsqueeze), so a run takes one sample; "
                     "set its other dims with --input-shape or --dim"));
  }
  return absl::OkStatus();
}

// A symbol an option fixed (--input-shape dims were fixed before `symbolic`
// was taken, so they bind through the options' inputs as `original_inputs`
// had them) binds every other dim of the same name; a symbol fixed at two
// values binds none.
template <typename Inputs>
void BindSameNamedDims(const ShapeOptions& options,
                       const Inputs& original_inputs,
                       const SymbolicDims& symbolic) {
  std::map<std::string, int64_t> bound;
  std::set<std::string> ambiguous;
  auto bind = [&](const std::string& param, int64_t value) {
    auto [it, inserted] = bound.emplace(param, value);
    if (!inserted && it->second != value) ambiguous.insert(param);
  };
  for (const auto& [name, dims] : options.input_shapes) {
    for (const auto& vi : original_inputs) {
      if (vi.name() != name || !HasTensorShape(vi)) continue;
      const auto& shape = vi.type().tensor_type().shape();
      for (int i = 0; i < shape.dim_size() && i < static_cast<int>(dims.size());
           ++i) {
        if (shape.dim(i).has_dim_param())
          bind(shape.dim(i).dim_param(), dims[i]);
      }
    }
  }
  for (const auto& [dim, param] : symbolic) {
    if (dim->has_dim_value()) bind(param, dim->dim_value());
  }
  for (const auto& [dim, param] : symbolic) {
    auto it = bound.find(param);
    if (!dim->has_dim_value() && it != bound.end() &&
        !ambiguous.contains(param))
      dim->set_dim_value(it->second);
  }
}

}  // namespace

absl::StatusOr<InputShapeChanges> ApplyInputShapes(const ShapeOptions& options,
                                                   onnx::ModelProto* model) {
  if (options.batch_size < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--batch-size must be positive, got ", options.batch_size));
  }
  InputShapeChanges changes;
  onnx::GraphProto* graph = model->mutable_graph();
  const auto original_inputs = graph->input();
  changes.without_batch_axis = InputsWithoutBatchAxis(*graph);
  for (const auto& [name, dims] : options.input_shapes) {
    RETURN_IF_ERROR(SetInputShape(name, dims, graph, &changes));
  }
  // Symbolic dims before --batch-size, to bind their names below.
  const SymbolicDims symbolic = FindSymbolicDims(graph);
  RETURN_IF_ERROR(SetNamedDims(options.dims, symbolic));
  if (options.batch_size > 0) SetBatch(options, graph, &changes);
  RETURN_IF_ERROR(CheckBatchAxis(options, *graph, changes));
  BindSameNamedDims(options, original_inputs, symbolic);
  if (!changes.overridden.empty()) ForgetRecordedShapes(graph);
  return changes;
}

onnx::ShapeInferenceOptions InferenceOptions() {
  return InferenceOptionsFor(InferencePurpose::kShapes);
}

absl::Status InferShapes(onnx::ModelProto* model, ShapeDataMap* data) {
  ASSIGN_OR_RETURN(const std::string error,
                   RunOnnxInference(model, InferencePurpose::kShapes, data));
  if (!error.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape inference failed: ", error));
  }
  return absl::OkStatus();
}

TensorInfoMap CollectTensorInfo(const onnx::GraphProto& graph) {
  TensorInfoMap map;
  // Later sources override earlier ones: value_info, then inputs/outputs,
  // then initializers (whose dims are exact).
  for (const auto& vi : graph.value_info())
    map[vi.name()] = TensorInfoFromType(vi.type());
  for (const auto& vi : graph.input()) {
    TensorInfo info = TensorInfoFromType(vi.type());
    if (info.elem_type != 0 || !map.contains(vi.name())) map[vi.name()] = info;
  }
  for (const auto& vi : graph.output()) {
    TensorInfo info = TensorInfoFromType(vi.type());
    auto it = map.find(vi.name());
    // Keep a richer inferred shape over a declared output without one.
    if (it == map.end() || (info.rank_known && !it->second.IsStatic())) {
      map[vi.name()] = info;
    }
  }
  for (const auto& t : graph.initializer()) {
    TensorInfo info;
    info.elem_type = t.data_type();
    info.rank_known = true;
    info.dims.assign(t.dims().begin(), t.dims().end());
    map[t.name()] = info;
  }
  for (const auto& node : graph.node()) {
    if (node.op_type() != "Constant" || node.output_size() != 1) continue;
    for (const auto& attr : node.attribute()) {
      TensorInfo info;
      info.rank_known = true;
      if (attr.name() == "value" && attr.has_t()) {
        info.elem_type = attr.t().data_type();
        info.dims.assign(attr.t().dims().begin(), attr.t().dims().end());
      } else if (attr.name() == "value_float") {
        info.elem_type = onnx::TensorProto::FLOAT;
      } else if (attr.name() == "value_int") {
        info.elem_type = onnx::TensorProto::INT64;
      } else if (attr.name() == "value_floats") {
        info.elem_type = onnx::TensorProto::FLOAT;
        info.dims = {attr.floats_size()};
      } else if (attr.name() == "value_ints") {
        info.elem_type = onnx::TensorProto::INT64;
        info.dims = {attr.ints_size()};
      } else {
        continue;
      }
      map[node.output(0)] = info;
    }
  }
  return map;
}

}  // namespace autoshard
