// Note [One analysis per model]
// What planning knows about one model under one option set (issue 26),
// computed once by sharder/prepare.h and then only read: by every strategy
// and bound (through the ShardingProblem and the device models), the
// planner, the compile judge, `inspect`, `solve`, and every writer of the
// outputs (the split takes the DAG, the constant mask and the interface
// types from here; the pictures take the DAG and the device). A Plan holds
// it (Plan::analysis) so the outputs of a run never rebuild it.
//
// As LLVM's analysis manager (`AM.getResult<...>`) does, the costly parts
// that depend on more than the model are built on first use and cached: the
// DeviceModel of each available memory proportion (`device_models()`).
// Nothing is invalidated: the analysis is immutable once made, and a run
// with other options (another batch, precision or device) makes another.
// It is held by shared_ptr and never moves: `dag` points into `model`, and
// the device models into `problem`.
#ifndef AUTOSHARD_COSTMODEL_MODEL_ANALYSIS_H_
#define AUTOSHARD_COSTMODEL_MODEL_ANALYSIS_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "costmodel/cost_model.h"
#include "costmodel/device_models.h"
#include "costmodel/precision.h"
#include "costmodel/problem.h"
#include "graph/graph.h"
#include "graph/shapes.h"
#include "graph/tensor_types.h"
#include "onnx/onnx_pb.h"
#include "proto/device.pb.h"

namespace autoshard {

struct ModelAnalysis {
  ModelAnalysis() = default;
  ModelAnalysis(const ModelAnalysis&) = delete;
  ModelAnalysis& operator=(const ModelAnalysis&) = delete;

  // Planning's copy of the model (nodes named, input shapes fixed, shapes
  // inferred, large initializers without data): `dag` points into it. Its
  // nodes are the model's in file order, so `dag`'s structure (ids, edges,
  // topological order) is that of the annotated model too.
  std::shared_ptr<const onnx::ModelProto> model;
  Graph dag;
  // Every main-graph tensor's type and shape, after the options, ONNX's
  // inference and autoshard's propagation (graph/shape_analysis.h).
  TensorInfoMap tensors;
  ModelCosts costs;  // per node, costmodel/cost_model.h
  // The plain problem every strategy and bound sees; its is_constant is the
  // model's constant mask (FindConstantNodes, computed once by the costs).
  ShardingProblem problem;
  // The chip, resolved (the built-in default, the available memory
  // proportion override applied), and the precision the costs use.
  proto::DeviceProfile device;
  Precision precision = Precision::kFp32;
  // Samples per step: the first input's first dim, else 1; 1 when that
  // input has no batch axis (graph/batch_axis.h: the graph adds one).
  int64_t batch = 1;
  // The per-stage interface types from the run's one ONNX inference, when
  // it could type them (ModelShapes::interface_types; empty when
  // --input-shape replaced a static dim, or ONNX's inference on static
  // inputs threw: the split infers them itself then, or see `declared`).
  std::optional<InterfaceTypes> interface_types;
  // Else, when planning fixed free input dims: the model as declared after
  // the run's one ONNX inference, from which the split types its interfaces
  // (InterfaceTypesOf, graph/shape_analysis.h; RecordedTypes of it before
  // the inference in `declared_recorded`). Null otherwise.
  std::shared_ptr<const onnx::ModelProto> declared;
  TypeMap declared_recorded;

  // The device models of `problem` on `device` with `precision`, one per
  // available memory proportion, each built on first use (thread-safe).
  // Call only once problem, device and precision are set.
  const DeviceModels& device_models() const {
    std::call_once(device_models_once_, [this] {
      device_models_ =
          std::make_unique<const DeviceModels>(problem, device, precision);
    });
    return *device_models_;
  }
  // The device model with the device's own proportion.
  const DeviceModel& device_model() const { return device_models().Get(); }

 private:
  mutable std::once_flag device_models_once_;
  mutable std::unique_ptr<const DeviceModels> device_models_;
};

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_MODEL_ANALYSIS_H_
