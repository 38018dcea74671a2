// libFuzzer target: sharding-config YAML -> parse -> apply to a small
// residual model (PlanFromShardingPoints, as `autoshard apply` does).
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "fuzz/fuzz_util.h"
#include "sharder/autoshard.h"
#include "writers/emit.h"

namespace autoshard {
namespace {

// x: float[1,4]; a = MatMul(x, w0); b = Relu(a); c = Add(b, x);
// y = MatMul(c, w1) (tests/test_util.h's kResidualModelText).
const onnx::ModelProto& Model() {
  static const onnx::ModelProto model = fuzz::NamedModel(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[1,4] x) => (float[1,4] y)
          <float[4,4] w0 = {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1},
           float[4,4] w1 = {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1}> {
        a = MatMul(x, w0)
        b = Relu(a)
        c = Add(b, x)
        y = MatMul(c, w1)
      })");
  return model;
}

}  // namespace
}  // namespace autoshard

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto points = autoshard::ParseShardingConfigYaml(text, "fuzz.yaml");
  if (!points.ok()) return 0;
  autoshard::Options options;
  options.num_ipus = 4;
  (void)autoshard::PlanFromShardingPoints(autoshard::Model(), options, *points);
  return 0;
}
