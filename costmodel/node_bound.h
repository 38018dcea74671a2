// A node no IPU can hold: at POD scale (a Llama-2-70B graph's attention
// scores are 537 MB in and 537 MB out) a single node may need more than an
// IPU's memory, and then no split onto any number of IPUs fits; the
// strategies stop searching for one (issue 15).
//
// Note [Node bound]
// Under the tile-memory model (costmodel/device_model.h), the IPU that runs
// node n holds at n's step: the weights n reads, its code (CodeBytes), the
// tensors it reads (live activations, or exchange buffers when another IPU
// produced them) and the tensors it writes. So
//   bound(n) = weights(n) + code(n) + Σ inputs' bytes + Σ outputs' bytes
// is at most the IPU's total bytes, and the fullest of its T tiles holds at
// least total / T. When bound(n) > T x bytes per tile, some tile overflows
// wherever n runs, with whatever company. Temporaries and graph inputs are
// left out, so the bound is never above the model's figure. Under plain-bytes
// memory (DeviceModel::PlainMemory) it is what that memory counts of n alone:
// weights(n) + code(n), plus Σ outputs' bytes when activations count.
#ifndef AUTOSHARD_COSTMODEL_NODE_BOUND_H_
#define AUTOSHARD_COSTMODEL_NODE_BOUND_H_

#include <cstdint>
#include <optional>
#include <string>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

struct OverflowingNode {
  int32_t node = 0;
  int64_t bound_bytes = 0;  // bound(n) of Note [Node bound]
  int64_t ipu_bytes = 0;    // tiles x bytes per tile
  // "node 'NAME' alone needs at least B bytes, more than an IPU's M bytes"
  std::string message;
};

// bound(n) of Note [Node bound]. O(n's inputs and outputs).
int64_t NodeBoundBytes(const ShardingProblem& problem, const DeviceModel& model,
                       int32_t node);

// The node of largest bound(n) when it exceeds one IPU's memory, else none.
// O(nodes + edges).
std::optional<OverflowingNode> NodeThatNoIpuHolds(
    const ShardingProblem& problem, const DeviceModel& model);

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_NODE_BOUND_H_
