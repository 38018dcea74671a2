#include "pod/no_fit.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/plural.h"
#include "costmodel/device_model.h"
#include "costmodel/node_bound.h"
#include "costmodel/plan_evaluation.h"

namespace autoshard::pod {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Note [No-fit reasons], 1.
std::optional<NoFit> WeightsReason(const proto::DeviceProfile& device,
                                   Precision precision, int64_t weights,
                                   int num_ipus) {
  const int64_t ipu_bytes =
      int64_t{device.tiles_per_ipu()} * device.bytes_per_tile();
  if (ipu_bytes <= 0) return std::nullopt;
  const int64_t need = CeilDiv(weights, ipu_bytes);
  if (need <= num_ipus) return std::nullopt;
  NoFit out;
  out.reason =
      absl::StrCat("the weights (", BytesText(weights), ") need at least ",
                   Plural(need, "IPU"), " (an IPU holds ", BytesText(ipu_bytes),
                   "); the plan has ", num_ipus);
  out.would_fit.push_back(absl::StrCat(
      "--num-ipus ", need, " or more (or --num-ipus auto --max-ipus ", need,
      " or more)"));
  if (precision == Precision::kFp32) {
    out.would_fit.push_back(
        absl::StrCat("--precision fp16 (float weights halve: at least ",
                     Plural(CeilDiv(need, 2), "IPU"), ")"));
  }
  return out;
}

// The fullest tile of node `n` alone on an IPU under `model`.
int64_t AloneTileBytes(const DeviceModel& model, int32_t n,
                       std::vector<int32_t>* scratch) {
  std::fill(scratch->begin(), scratch->end(), 1);
  (*scratch)[n] = 0;
  return model.EvaluateMemory(*scratch, 0).max_tile_bytes;
}

// Note [No-fit reasons], 3.
std::optional<NoFit> TileReason(const DeviceModels& models, double proportion,
                                int64_t batch,
                                absl::Span<const int32_t> ipu_of_node,
                                int32_t fullest_ipu) {
  const ShardingProblem& problem = models.problem();
  const proto::DeviceProfile device =
      WithMemoryProportion(models.profile(), proportion);
  const Precision precision = models.precision();
  const DeviceModel& model = models.At(proportion);
  std::vector<std::pair<int64_t, int32_t>> nodes;  // (bound, node)
  for (int32_t n = 0; n < problem.num_nodes(); ++n) {
    if (ipu_of_node[n] != fullest_ipu || problem.is_constant[n]) continue;
    nodes.emplace_back(NodeBoundBytes(problem, model, n), n);
  }
  const size_t tried = std::min<size_t>(nodes.size(), kNodesTried);
  std::partial_sort(nodes.begin(), nodes.begin() + tried, nodes.end(),
                    std::greater<>());
  std::vector<int32_t> scratch(problem.num_nodes(), 1);
  const int64_t tile = device.bytes_per_tile();
  int32_t worst = -1;
  int64_t worst_bytes = tile;
  for (size_t i = 0; i < tried; ++i) {
    const int32_t n = nodes[i].second;
    const int64_t bytes = AloneTileBytes(model, n, &scratch);
    if (bytes > worst_bytes) {
      worst = n;
      worst_bytes = bytes;
    }
  }
  if (worst < 0) return std::nullopt;
  NoFit out;
  out.reason = absl::StrCat(
      "node '", problem.names[worst], "' (on IPU ", fullest_ipu,
      ") alone on an IPU needs ", BytesText(worst_bytes), " of a ",
      BytesText(tile),
      " tile (its inputs received from other IPUs): no split fits while it "
      "is whole");
  if (batch > 1) {
    const int64_t smaller = std::max<int64_t>(1, batch * tile / worst_bytes);
    out.would_fit.push_back(absl::StrCat(
        "a smaller batch: try --batch-size ", std::min(smaller, batch - 1),
        " (activations scale with the batch, weights do not)"));
  }
  for (double amp : {0.3, 0.1}) {
    if (amp >= device.available_memory_proportion()) continue;
    if (AloneTileBytes(models.At(amp), worst, &scratch) <= tile) {
      out.would_fit.push_back(absl::StrCat("--available-memory-proportion ",
                                           amp,
                                           " (the node then fits "
                                           "under the tile-memory model)"));
      break;
    }
  }
  if (precision == Precision::kFp32)
    out.would_fit.push_back("--precision fp16 (halves float tensors)");
  return out;
}

}  // namespace

std::string BytesText(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (bytes >= 1000 && u < 6) {
    bytes /= 1000;
    ++u;
  }
  return u == 0 ? absl::StrFormat("%.0f %s", bytes, units[u])
                : absl::StrFormat("%.2f %s", bytes, units[u]);
}

NoFit ExplainNoFit(const ShardingProblem& problem,
                   const proto::DeviceProfile& device, Precision precision,
                   int64_t total_weight_bytes, int64_t batch, int num_ipus,
                   absl::Span<const int32_t> ipu_of_node, int32_t fullest_ipu) {
  const DeviceModels models(problem, device, precision);
  return ExplainNoFit(models, device.available_memory_proportion(),
                      total_weight_bytes, batch, num_ipus, ipu_of_node,
                      fullest_ipu);
}

NoFit ExplainNoFit(const DeviceModels& models, double proportion,
                   int64_t total_weight_bytes, int64_t batch, int num_ipus,
                   absl::Span<const int32_t> ipu_of_node, int32_t fullest_ipu) {
  const ShardingProblem& problem = models.problem();
  const proto::DeviceProfile device =
      WithMemoryProportion(models.profile(), proportion);
  const Precision precision = models.precision();
  if (std::optional<NoFit> w =
          WeightsReason(device, precision, total_weight_bytes, num_ipus)) {
    return *w;
  }
  if (std::optional<OverflowingNode> big =
          NodeThatNoIpuHolds(problem, models.At(proportion))) {
    NoFit out{big->message, {}};
    if (batch > 1) out.would_fit.push_back("a smaller --batch-size");
    if (precision == Precision::kFp32)
      out.would_fit.push_back("--precision fp16 (halves float tensors)");
    return out;
  }
  if (std::optional<NoFit> t =
          TileReason(models, proportion, batch, ipu_of_node, fullest_ipu)) {
    return *t;
  }
  return NoFit{absl::StrCat("no split onto ", num_ipus,
                            " IPUs that the planner found fits"),
               {"more IPUs: --num-ipus auto (the fewest powers of two that "
                "fit)"}};
}

}  // namespace autoshard::pod
