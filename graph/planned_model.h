// What one planning run derived from a model that writing its outputs reuses,
// so that a run builds the DAG and runs ONNX's inference once (issue 12): the
// per-stage models (sharder/split/split.h) take the node DAG and the
// interface types from here instead of computing them again.
#ifndef AUTOSHARD_GRAPH_PLANNED_MODEL_H_
#define AUTOSHARD_GRAPH_PLANNED_MODEL_H_

#include <memory>
#include <optional>

#include "graph/graph.h"
#include "graph/tensor_types.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

struct PlannedModel {
  // Planning's copy of the model (nodes named, input shapes fixed, shapes
  // inferred, large initializers without data): `dag` points into it. Its
  // nodes are the planned model's in file order, so `dag`'s structure (ids,
  // edges, topological order) is that of the annotated model too.
  std::shared_ptr<const onnx::ModelProto> model;
  Graph dag;
  // The per-stage interface types (InferTensorTypes of the model as given)
  // from planning's one ONNX inference, on the model as declared when
  // planning fixed free input dims and ONNX's inference threw; empty when
  // --input-shape replaced a static dim, or ONNX's inference on static inputs
  // threw (the split infers them itself then), or see `declared`.
  std::optional<InterfaceTypes> interface_types;
  // Else, when planning fixed free input dims: the model as declared after
  // the run's one ONNX inference, from which the split types its interfaces
  // (InterfaceTypesOf, graph/shape_analysis.h; RecordedTypes of it before
  // the inference in `declared_recorded`). Null otherwise.
  std::shared_ptr<const onnx::ModelProto> declared;
  TypeMap declared_recorded;
};

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_PLANNED_MODEL_H_
