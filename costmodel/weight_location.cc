#include "costmodel/weight_location.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace autoshard {

int64_t ShardBytes(int64_t bytes, int shard_over) {
  const int64_t n = std::max(shard_over, 1);
  return bytes / n + (bytes % n != 0 ? 1 : 0);
}

int64_t AllGatherBytes(int64_t bytes, int shard_over) {
  return shard_over > 1 ? (shard_over - 1) * ShardBytes(bytes, shard_over) : 0;
}

double RemoteLoadSeconds(const proto::DeviceProfile& device, int64_t bytes,
                         int shard_over) {
  if (bytes <= 0) return 0;
  double s = static_cast<double>(ShardBytes(bytes, shard_over)) /
             device.streaming_memory_bytes_per_s();
  const int64_t gathered = AllGatherBytes(bytes, shard_over);
  if (gathered > 0)
    s += static_cast<double>(gathered) / device.link_bytes_per_s();
  return s;
}

absl::Status CheckStreamingMemory(const proto::DeviceProfile& device) {
  if (device.streaming_memory_bytes_per_machine() <= 0 ||
      device.streaming_memory_bytes_per_s() <= 0 ||
      device.link_bytes_per_s() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--weights-location remote: the device profile '", device.name(),
        "' has no Streaming Memory (streaming_memory_bytes_per_machine and "
        "streaming_memory_bytes_per_s must be > 0): a remote weight needs the "
        "DDR of an IPU-Machine (ipu2, ipu21)"));
  }
  return absl::OkStatus();
}

absl::Status MakeWeightsRemote(const proto::DeviceProfile& device,
                               int shard_over, ShardingProblem* problem) {
  if (auto s = CheckStreamingMemory(device); !s.ok()) return s;
  if (shard_over < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shard-over must be at least 1, got ", shard_over));
  }
  const size_t w_count = problem->weight_size_bytes.size();
  problem->weight_loaded_bytes.assign(w_count, 0);
  problem->weight_load_s.assign(w_count, 0);
  for (size_t w = 0; w < w_count; ++w) {
    const int64_t bytes = problem->weight_size_bytes[w];
    // Integer weights (shapes, axes) stay constants the compiler reads.
    const bool floating =
        problem->weight_is_float.empty() || problem->weight_is_float[w];
    if (bytes <= 0 || !floating) continue;
    problem->weight_loaded_bytes[w] = bytes;
    problem->weight_load_s[w] = RemoteLoadSeconds(device, bytes, shard_over);
    problem->weight_size_bytes[w] = 0;
  }
  return absl::OkStatus();
}

int64_t ResidentWeightBytes(const ShardingProblem& problem) {
  int64_t total = 0;
  for (int64_t b : problem.weight_size_bytes) total += b;
  return total;
}

bool HasRemoteWeights(const ShardingProblem& problem) {
  return std::any_of(problem.weight_loaded_bytes.begin(),
                     problem.weight_loaded_bytes.end(),
                     [](int64_t b) { return b > 0; });
}

std::vector<int64_t> StreamingBytesPerMachine(
    const std::vector<std::vector<int64_t>>& remote_weight_bytes_per_ipu,
    int ipus_per_machine, int shard_over) {
  const int per = std::max(ipus_per_machine, 1);
  const int ipus = static_cast<int>(remote_weight_bytes_per_ipu.size());
  std::vector<int64_t> machines(std::max(1, (ipus + per - 1) / per), 0);
  for (int d = 0; d < ipus; ++d) {
    for (int64_t b : remote_weight_bytes_per_ipu[d])
      machines[d / per] += ShardBytes(b, shard_over);
  }
  return machines;
}

absl::Status CheckStreamingCapacity(const proto::DeviceProfile& device,
                                    const std::vector<int64_t>& per_machine) {
  for (size_t m = 0; m < per_machine.size(); ++m) {
    if (per_machine[m] > device.streaming_memory_bytes_per_machine()) {
      const int64_t per = std::max(device.ipus_per_machine(), 1);
      return absl::InvalidArgumentError(absl::StrFormat(
          "remote weights: IPU-Machine %d (IPUs %d-%d) would hold %.1f GB "
          "of Streaming Memory, more than the '%s' profile's %.1f GB per "
          "IPU-Machine: shard over more replicas (--shard-over) or use more "
          "IPUs per replica",
          m, m * per, m * per + per - 1, per_machine[m] / 1e9, device.name(),
          device.streaming_memory_bytes_per_machine() / 1e9));
    }
  }
  return absl::OkStatus();
}

}  // namespace autoshard
