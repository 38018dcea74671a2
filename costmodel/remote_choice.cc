#include "costmodel/remote_choice.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "costmodel/device_model.h"
#include "costmodel/weight_location.h"

namespace autoshard {
namespace {

// Moves weight w between resident (its full bytes) and remote.
void SetRemote(const proto::DeviceProfile& device, int shard_over, int32_t w,
               int64_t bytes, bool remote, ShardingProblem* p) {
  p->weight_size_bytes[w] = remote ? 0 : bytes;
  p->weight_loaded_bytes[w] = remote ? bytes : 0;
  p->weight_load_s[w] =
      remote ? RemoteLoadSeconds(device, bytes, shard_over) : 0;
}

bool Floating(const ShardingProblem& p, int32_t w) {
  return p.weight_is_float.empty() || p.weight_is_float[w] != 0;
}

// One greedy pass of Note [Fewest bytes off-chip], moving each IPU's
// weights largest first (`largest_first`) or smallest first.
RemoteChoice Greedy(const ShardingProblem& on_chip,
                    const proto::DeviceProfile& device, Precision precision,
                    absl::Span<const int32_t> ipu_of_node, int num_ipus,
                    int shard_over, bool largest_first) {
  // The device model reads the weights' bytes from `p` at every memory
  // evaluation, so moves need no new model (its node times, which include
  // loads, are not used here).
  ShardingProblem p = on_chip;
  const size_t w_count = p.weight_size_bytes.size();
  p.weight_loaded_bytes.assign(w_count, 0);
  p.weight_load_s.assign(w_count, 0);
  const std::vector<int64_t>& full = on_chip.weight_size_bytes;
  const DeviceModel model(p, device, precision);
  // The weights each IPU reads, largest first (ties: lower id).
  std::vector<std::vector<int32_t>> reads(std::max(num_ipus, 0));
  std::vector<std::vector<int32_t>> readers(w_count);  // weight -> IPUs
  for (size_t n = 0; n < p.node_weights.size() && n < ipu_of_node.size(); ++n) {
    const int32_t d = ipu_of_node[n];
    if (d < 0 || d >= num_ipus) continue;
    for (int32_t w : p.node_weights[n]) {
      reads[d].push_back(w);
      readers[w].push_back(d);
    }
  }
  const auto larger = [&](int32_t x, int32_t y) {
    return full[x] != full[y] ? full[x] > full[y] : x < y;
  };
  const auto smaller = [&](int32_t x, int32_t y) {
    return full[x] != full[y] ? full[x] < full[y] : x < y;
  };
  for (auto& r : reads) {
    if (largest_first) {
      std::sort(r.begin(), r.end(), larger);
    } else {
      std::sort(r.begin(), r.end(), smaller);
    }
    r.erase(std::unique(r.begin(), r.end()), r.end());
  }
  for (auto& r : readers) {
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
  }
  RemoteChoice out;
  out.fits = true;
  std::vector<bool> remote(w_count, false);
  for (int d = 0; d < num_ipus; ++d) {
    size_t next = 0;  // reads[d] before it are remote or not movable
    while (!model.EvaluateMemory(ipu_of_node, d).fits) {
      while (next < reads[d].size() &&
             (remote[reads[d][next]] || full[reads[d][next]] <= 0 ||
              !Floating(p, reads[d][next]))) {
        ++next;
      }
      if (next == reads[d].size()) {
        out.fits = false;
        break;
      }
      const int32_t w = reads[d][next];
      remote[w] = true;
      SetRemote(device, shard_over, w, full[w], true, &p);
    }
  }
  if (out.fits) {
    std::vector<int32_t> chosen;
    for (size_t w = 0; w < w_count; ++w)
      if (remote[w]) chosen.push_back(static_cast<int32_t>(w));
    std::sort(chosen.begin(), chosen.end(), larger);
    for (int32_t w : chosen) {
      SetRemote(device, shard_over, w, full[w], false, &p);
      const bool all_fit = std::all_of(
          readers[w].begin(), readers[w].end(),
          [&](int32_t d) { return model.EvaluateMemory(ipu_of_node, d).fits; });
      if (all_fit) {
        remote[w] = false;
      } else {
        SetRemote(device, shard_over, w, full[w], true, &p);
      }
    }
  }
  for (size_t w = 0; w < w_count; ++w) {
    if (!remote[w]) continue;
    out.remote.push_back(static_cast<int32_t>(w));
    out.remote_bytes += full[w];
  }
  return out;
}

}  // namespace

RemoteChoice FewestBytesOffChip(const ShardingProblem& on_chip,
                                const proto::DeviceProfile& device,
                                Precision precision,
                                absl::Span<const int32_t> ipu_of_node,
                                int num_ipus, int shard_over) {
  RemoteChoice large = Greedy(on_chip, device, precision, ipu_of_node, num_ipus,
                              shard_over, /*largest_first=*/true);
  if (large.fits && large.remote.empty()) return large;
  RemoteChoice small = Greedy(on_chip, device, precision, ipu_of_node, num_ipus,
                              shard_over, /*largest_first=*/false);
  if (!large.fits) return small;
  if (!small.fits) return large;
  return small.remote_bytes < large.remote_bytes ? small : large;
}

absl::Status MakeChosenWeightsRemote(const proto::DeviceProfile& device,
                                     int shard_over,
                                     const std::vector<int32_t>& remote,
                                     ShardingProblem* problem) {
  if (auto s = CheckStreamingMemory(device); !s.ok()) return s;
  if (shard_over < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shard-over must be at least 1, got ", shard_over));
  }
  const size_t w_count = problem->weight_size_bytes.size();
  problem->weight_loaded_bytes.resize(w_count, 0);
  problem->weight_load_s.resize(w_count, 0);
  for (int32_t w : remote) {
    if (w < 0 || static_cast<size_t>(w) >= w_count) {
      return absl::InvalidArgumentError(absl::StrCat(
          "remote weight id ", w, " out of range (", w_count, " weights)"));
    }
    const int64_t bytes = problem->weight_size_bytes[w];
    if (bytes <= 0) continue;
    SetRemote(device, shard_over, w, bytes, true, problem);
  }
  return absl::OkStatus();
}

}  // namespace autoshard
