// Why a plan does not fit, in the terms a user can act on (issue 32): not
// the compiler-style "Out of memory on tile 88320" line alone, but the cause
// no split of the problem can avoid — the weights need more IPUs than the
// plan has, or a node alone overflows an IPU or a tile — and what would fit.
//
// Note [No-fit reasons]
// Checked in order, the first that holds is the reason:
//  1. weights: every weight is stored on some IPU, so a split onto k IPUs
//     needs Σ weight bytes <= k x tiles x bytes per tile; the reason names
//     N = ceil(Σ weights / IPU bytes). Would fit: N IPUs or more; with fp32,
//     --precision fp16 (float weights halve: at least ceil(N / 2)).
//  2. a node no IPU holds (costmodel/node_bound.h): no split fits.
//  3. a node that alone overflows a tile: the plan's fullest IPU's nodes,
//     the kNodesTried largest by NodeBoundBytes, each costed alone on an
//     IPU by the tile-memory model (its weights, code, temporaries,
//     inputs and outputs spread as the model spreads them). Would fit: a
//     smaller batch (estimated: batch x tile bytes / the node's, when the
//     batch is above 1 — activations scale with it, weights do not, so it
//     is a guess to try), or a lower --available-memory-proportion when the
//     model says the node then fits.
//  4. otherwise the planner found no fitting split of this many IPUs: more
//     IPUs (--num-ipus auto) may fit.
#ifndef AUTOSHARD_POD_NO_FIT_H_
#define AUTOSHARD_POD_NO_FIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "costmodel/device_models.h"
#include "costmodel/precision.h"
#include "costmodel/problem.h"
#include "proto/device.pb.h"

namespace autoshard::pod {

// Nodes of the fullest IPU costed alone (Note [No-fit reasons], 3).
inline constexpr int kNodesTried = 16;

struct NoFit {
  std::string reason;                  // one sentence, no trailing period
  std::vector<std::string> would_fit;  // flags or changes to try, in order
};

// The reason a split of `problem` onto `num_ipus` IPUs of `device` (with
// its available memory proportion) at `precision` and `batch` samples does
// not fit, per Note [No-fit reasons]; `ipu_of_node` is the plan's split and
// `fullest_ipu` its fullest IPU; `total_weight_bytes` the model's weights.
// Cost: O(kNodesTried x (nodes + edges + tiles)).
NoFit ExplainNoFit(const ShardingProblem& problem,
                   const proto::DeviceProfile& device, Precision precision,
                   int64_t total_weight_bytes, int64_t batch, int num_ipus,
                   absl::Span<const int32_t> ipu_of_node, int32_t fullest_ipu);

// The same with the device models of the run (the model's analysis): the
// device is models.profile() with available memory proportion `proportion`,
// and the models of that proportion (and of 0.3 and 0.1, when tried) are
// built once.
NoFit ExplainNoFit(const DeviceModels& models, double proportion,
                   int64_t total_weight_bytes, int64_t batch, int num_ipus,
                   absl::Span<const int32_t> ipu_of_node, int32_t fullest_ipu);

// "1.50 kB", "13.49 GB": decimal units, as the reports print bytes.
std::string BytesText(double bytes);

}  // namespace autoshard::pod

#endif  // AUTOSHARD_POD_NO_FIT_H_
