// Internal to sharder/: what planning derives from a model before any
// strategy runs (naming, shapes, DAG, costs, problem, device), shared by the
// public API (autoshard.cc) and `inspect` (inspect.cc).
#ifndef AUTOSHARD_SHARDER_PREPARE_H_
#define AUTOSHARD_SHARDER_PREPARE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "costmodel/cost_model.h"
#include "costmodel/problem.h"
#include "graph/graph.h"
#include "graph/naming.h"
#include "graph/planned_model.h"
#include "graph/shape_analysis.h"
#include "graph/shape_propagation.h"
#include "onnx/onnx_pb.h"
#include "proto/device.pb.h"
#include "sharder/options.h"

namespace autoshard::internal {

// A graph input dim neither the model nor an option fixes.
struct UnresolvedDim {
  std::string input;
  int dim = 0;
  std::string name;  // dim_param, if any
};

// Everything planning derives from a model. `model` (a copy without the data
// of large initializers, with nodes named and shapes inferred) is heap-held
// so `graph`, which points into it, stays valid when a Prepared moves.
struct Prepared {
  proto::DeviceProfile device;  // resolved: built-in default, AMP override
  std::unique_ptr<onnx::ModelProto> model;
  Graph graph;
  ModelCosts costs;
  ShardingProblem problem;
  NamingResult naming;
  std::vector<UnresolvedDim> unresolved_dims;  // after the options
  // Data-dependent dims set to a bound by shape propagation.
  std::vector<ShapeAssumption> shape_assumptions;
  // Every main-graph tensor's type and shape, after the options, ONNX's
  // inference and autoshard's propagation (graph/shape_analysis.h).
  TensorInfoMap tensors;
  int64_t batch = 1;  // samples per step (FindBatch in prepare.cc)
  std::vector<std::string> warnings;
  // The per-stage interface types from the run's one ONNX inference
  // (ModelShapes::interface_types), when it could type them.
  std::optional<InterfaceTypes> interface_types;
  // The model as declared after that inference, when the interfaces are to
  // be typed from it (PlannedModel::declared).
  std::shared_ptr<const onnx::ModelProto> declared;
  TypeMap declared_recorded;
};

// Names, shapes, builds and costs `model` per `options` (num_ipus and
// strategy are not looked at). Errors as PlanModel's.
absl::StatusOr<Prepared> Prepare(const onnx::ModelProto& model,
                                 const Options& options);

// The DAG, the model it points into and the interface types, for the plan's
// outputs (Plan::planned): taken from `p` once planning is done with it.
std::shared_ptr<const PlannedModel> TakePlannedModel(Prepared p);

std::string PrecisionName(Precision precision);

}  // namespace autoshard::internal

#endif  // AUTOSHARD_SHARDER_PREPARE_H_
