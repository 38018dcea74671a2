// Internal to sharder/: what planning derives from a model before any
// strategy runs (naming, shapes, DAG, costs, problem, device: the model's
// analysis), shared by the public API (autoshard.cc), `inspect`
// (inspect.cc) and `calibrate`.
#ifndef AUTOSHARD_SHARDER_PREPARE_H_
#define AUTOSHARD_SHARDER_PREPARE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "costmodel/cost_model.h"
#include "costmodel/model_analysis.h"
#include "costmodel/problem.h"
#include "graph/graph.h"
#include "graph/naming.h"
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

// What preparing a model yields: its analysis (costmodel/model_analysis.h,
// Note [One analysis per model]), which every later step reads and the plan
// keeps, and what the run reports about the preparation itself.
struct Prepared {
  std::shared_ptr<ModelAnalysis> analysis = std::make_shared<ModelAnalysis>();
  NamingResult naming;
  std::vector<UnresolvedDim> unresolved_dims;  // after the options
  // Data-dependent dims set to a bound by shape propagation.
  std::vector<ShapeAssumption> shape_assumptions;
  std::vector<std::string> warnings;
};

// Names, shapes, builds and costs `model` per `options` (num_ipus and
// strategy are not looked at). Errors as PlanModel's.
absl::StatusOr<Prepared> Prepare(const onnx::ModelProto& model,
                                 const Options& options);

std::string PrecisionName(Precision precision);

}  // namespace autoshard::internal

#endif  // AUTOSHARD_SHARDER_PREPARE_H_
