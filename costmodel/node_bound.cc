#include "costmodel/node_bound.h"

#include "absl/strings/str_cat.h"
#include "graph/shapes.h"

namespace autoshard {

int64_t NodeBoundBytes(const ShardingProblem& p, const DeviceModel& model,
                       int32_t n) {
  int64_t bytes = SaturatingAdd(p.NodeWeightBytes(n), model.CodeBytes(n));
  if (model.PlainMemory()) {
    // Plain bytes hold the node's own outputs at most, not its inputs.
    if (model.profile().memory_model() !=
        proto::MEMORY_MODEL_PLAIN_WEIGHTS_AND_ACTIVATIONS)
      return bytes;
    for (int64_t out : p.output_bytes[n]) bytes = SaturatingAdd(bytes, out);
    return bytes;
  }
  for (const auto& [producer, slot] : p.input_tensors[n]) {
    if (p.is_constant[producer]) continue;  // a weight, counted above or not
    bytes = SaturatingAdd(bytes, p.output_bytes[producer][slot]);
  }
  for (int64_t out : p.output_bytes[n]) bytes = SaturatingAdd(bytes, out);
  return bytes;
}

std::optional<OverflowingNode> NodeThatNoIpuHolds(const ShardingProblem& p,
                                                  const DeviceModel& model) {
  const proto::DeviceProfile& d = model.profile();
  const int64_t ipu_bytes = d.tiles_per_ipu() * d.bytes_per_tile();
  std::optional<OverflowingNode> worst;
  for (int32_t n = 0; n < p.num_nodes(); ++n) {
    if (p.is_constant[n]) continue;  // folded: held as a weight
    const int64_t bound = NodeBoundBytes(p, model, n);
    if (bound > ipu_bytes && (!worst || bound > worst->bound_bytes))
      worst = OverflowingNode{n, bound, ipu_bytes, ""};
  }
  if (worst) {
    worst->message =
        absl::StrCat("node '", p.names[worst->node], "' alone needs at least ",
                     worst->bound_bytes,
                     " bytes (its weights, code, inputs and outputs), "
                     "more than an IPU's ",
                     ipu_bytes,
                     " bytes: no split onto any number "
                     "of IPUs fits");
  }
  return worst;
}

}  // namespace autoshard
