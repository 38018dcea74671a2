// Per-IPU cost summaries of an assignment (the report's table and the plan
// file's `ipus`).
#ifndef AUTOSHARD_SHARDER_IPU_SUMMARIES_H_
#define AUTOSHARD_SHARDER_IPU_SUMMARIES_H_

#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"
#include "graph/graph.h"
#include "proto/device.pb.h"
#include "proto/plan.pb.h"
#include "solver/strategies/sharding_points.h"

namespace autoshard {

// One IpuCost per IPU 0..assignment.num_ipus()-1:
// - weight_bytes: the distinct weights the IPU's nodes read; a weight read on
//   two IPUs counts on both, once on an IPU however many stages read it;
// - activation_bytes: Σ output bytes of its nodes;
// - cut_tensor_out_bytes / cut_tensor_in_bytes: ComputeCutBytes's per IPU;
//   when an IPU runs several stages (Placement::RevisitsAnIpu),
//   ComputeStageCutBytes's summed over its stages.
std::vector<proto::IpuCost> SummarizeIpus(const ShardingProblem& problem,
                                          const Assignment& assignment);

// The cut tensors of `assignment` (see proto::CutTensor), largest first, then
// by producer id and output slot; `graph` (the problem's) names the tensors,
// or when it has no nodes (a problem file's plan) "<producer>:<slot>" does.
// Cost: O(nodes + tensor readers).
std::vector<proto::CutTensor> ListCutTensors(const ShardingProblem& problem,
                                             const Graph& graph,
                                             const Assignment& assignment);

// The tile-memory model's figures for IPU `ipu` as the plan file holds them
// (max_tile made global: ipu x tiles + local tile).
proto::IpuMemory MemoryProto(const IpuMemory& memory, int32_t ipu,
                             const proto::DeviceProfile& device);

// Copies the performance model's figures into the plan file's, with the
// gap to the cheap bound, which is also the certified one until
// solver/bound/certify.h says better.
void SetPerformanceProto(const Performance& perf, proto::Performance* out);

}  // namespace autoshard

#endif  // AUTOSHARD_SHARDER_IPU_SUMMARIES_H_
