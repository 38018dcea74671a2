#include "graph/onnx_inference.h"

#include <exception>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/step_counts.h"
#include "graph/onnx_guard.h"

namespace autoshard {

onnx::ShapeInferenceOptions InferenceOptionsFor(InferencePurpose purpose) {
  onnx::ShapeInferenceOptions options;
  switch (purpose) {
    case InferencePurpose::kShapes:
      options.check_type = false;
      options.error_mode = 0;  // keep going past nodes it cannot infer
      options.enable_data_propagation = true;
      break;
    case InferencePurpose::kDimCheck:
      options.check_type = false;
      options.error_mode = 1;  // every node's error, gathered
      options.enable_data_propagation = true;
      break;
    case InferencePurpose::kStageCheck:
      options.check_type = true;
      options.error_mode = 1;
      options.enable_data_propagation = false;
      break;
  }
  return options;
}

absl::StatusOr<std::string> RunOnnxInference(onnx::ModelProto* model,
                                             InferencePurpose purpose,
                                             ShapeDataMap* data) {
  StepCounts& counts = ThreadStepCounts();
  switch (purpose) {
    case InferencePurpose::kShapes:
      ++counts.onnx_inferences;
      break;
    case InferencePurpose::kDimCheck:
      ++counts.dim_checks;
      break;
    case InferencePurpose::kStageCheck:
      ++counts.stage_inferences;
      break;
  }
  if (absl::Status s = CheckModelForOnnx(*model); !s.ok()) return s;
  const onnx::ShapeInferenceOptions options = InferenceOptionsFor(purpose);
  // Note [Shape-15 reads its input's type unchecked] (graph/onnx_guard.cc);
  // the stage check loads the model as onnxruntime would, as written.
  const bool placeholders_wanted = purpose != InferencePurpose::kStageCheck;
  std::vector<std::string> placeholders;
  if (placeholders_wanted) placeholders = AddShapeInputTypes(model);
  std::string error;
  try {
    onnx::shape_inference::InferShapes(
        *model, onnx::OpSchemaRegistry::Instance(), options, data);
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "unknown error";
  }
  if (placeholders_wanted) RemoveEmptyShapeInputTypes(model, placeholders);
  return error;
}

bool InferNodeWithOnnx(const onnx::OpSchema* schema,
                       const onnx::NodeProto& node,
                       onnx::shape_inference::InferenceContextImpl& ctx,
                       const NodeFunctionContext& functions) {
  const onnx::FunctionProto* function = nullptr;
  if (schema != nullptr) {
    if (schema->has_type_and_shape_inference_function()) {
      ++ThreadStepCounts().node_inferences;
      schema->GetTypeAndShapeInferenceFunction()(ctx);
      return true;
    }
    if (functions.functions == nullptr || !schema->HasFunction()) return false;
    function = schema->GetFunction();
  } else {
    if (functions.functions == nullptr) return false;
    auto f = functions.functions->find(
        absl::StrCat(node.domain(), ":", node.op_type()));
    if (f == functions.functions->end()) return false;
    function = f->second;
  }
  ++ThreadStepCounts().node_inferences;
  onnx::shape_inference::InferShapeForFunctionNode(
      *function, onnx::OpSchemaRegistry::Instance(), ctx, *functions.options,
      *functions.functions, functions.symbol_table, functions.data);
  return true;
}

bool PropagateNodeDataWithOnnx(
    const onnx::OpSchema* schema,
    onnx::shape_inference::DataPropagationContextImpl& ctx) {
  if (schema == nullptr || !schema->has_data_propagation_function()) {
    return false;
  }
  schema->GetDataPropagationFunction()(ctx);
  return true;
}

}  // namespace autoshard
