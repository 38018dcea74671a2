// libFuzzer target: shape evaluation on small graphs: model bytes -> the
// guard (graph/onnx_guard.h) -> ONNX's inference -> autoshard's own shape
// propagation, as PlanModel runs them, without the search.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "graph/model_io.h"
#include "graph/onnx_guard.h"
#include "graph/shape_propagation.h"
#include "graph/shapes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Small graphs only: the model target covers large ones.
  if (size > 64 * 1024) return 0;
  auto model = autoshard::ParseModelBytes(
      absl::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  if (!model.ok() || model->graph().node_size() > 200) return 0;
  if (!autoshard::CheckModelForOnnx(*model).ok()) return 0;
  (void)autoshard::InferShapes(&*model);
  autoshard::TensorInfoMap tensors =
      autoshard::CollectTensorInfo(model->graph());
  (void)autoshard::PropagateShapes(&*model, &tensors);
  return 0;
}
