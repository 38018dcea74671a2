#include "pod/weights_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace autoshard::pod {
namespace {

std::string Gb(int64_t bytes) {
  return absl::StrFormat("%.2f GB", static_cast<double>(bytes) / 1e9);
}

// A JSON string literal.
std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppend(&out, absl::StrFormat("\\u%04x", c));
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string WeightLocationsText(const proto::Plan& plan) {
  if (!plan.has_weight_locations()) return "";
  const proto::WeightLocations& w = plan.weight_locations();
  std::string out;
  if (w.chosen() == "remote") {
    absl::StrAppend(
        &out, "weights: remote in Streaming Memory",
        w.shard_over() > 1
            ? absl::StrCat(", sharded over ", w.shard_over(), " replicas")
            : std::string(""),
        " (--weights-location ", w.asked(), ", retrieval ", w.retrieval_mode(),
        "): ", w.remote_weights_size(), " weights, ", Gb(w.remote_bytes()),
        " loaded each step; ", Gb(w.on_chip_weight_bytes()),
        " stay on-chip; Streaming Memory ",
        Gb(w.streaming_memory_bytes_per_machine()),
        " on the fullest IPU-Machine of ",
        Gb(w.streaming_memory_capacity_bytes()), "\n");
    const int shown = std::min(3, w.remote_weights_size());
    for (int i = 0; i < shown; ++i) {
      const proto::RemoteWeight& r = w.remote_weights(i);
      absl::StrAppend(&out, "  remote ", r.name(), ": ", r.bytes(), " bytes, ",
                      r.shard_bytes(), " per replica\n");
    }
    if (!w.bound_note().empty())
      absl::StrAppend(&out, "  bound: ", w.bound_note(), "\n");
  } else if (w.asked() != "on-chip") {
    absl::StrAppend(&out, "weights: on-chip (--weights-location ", w.asked(),
                    ")\n");
  }
  if (!w.other().empty()) {
    const bool pod = plan.has_replication();
    // A chosen split that does not fit has no throughput (0 here): say so,
    // as for the other side (a newcomer read "0.0 samples/s" beside the
    // pipeline line's figure).
    absl::StrAppend(&out, "weights ", w.chosen(), ": ",
                    plan.fits() || w.throughput_per_s() > 0
                        ? absl::StrFormat("%.1f%s", w.throughput_per_s(),
                                          pod ? " POD samples/s" : " samples/s")
                        : std::string("does not fit"),
                    "; ", w.other(), ": ",
                    w.other_fits()
                        ? absl::StrFormat("%.1f%s with %d IPUs per replica",
                                          w.other_throughput_per_s(),
                                          pod ? " POD samples/s" : " samples/s",
                                          w.other_ipus_per_replica())
                        : std::string("does not fit"),
                    "\n");
  }
  return out;
}

std::string PopartOptionsJson(const proto::Plan& plan) {
  const proto::WeightLocations& w = plan.weight_locations();
  const bool remote = w.chosen() == "remote";
  const bool sharded = remote && w.shard_over() > 1;
  // PopART's CommGroup: groups of consecutive replicas, or, for a grouping
  // with a stride (PopXL's replica_grouping(stride, size)), replicas a
  // stride apart (Orthogonal).
  const bool strided =
      plan.has_replication() && plan.replication().grouping_stride() > 1;
  const std::string domain =
      sharded ? absl::StrCat(", \"shardingDomain\": {\"type\": \"",
                             strided ? "Orthogonal" : "Consecutive",
                             "\", \"replicaGroupSize\": ", w.shard_over(), "}")
              : std::string("");
  const std::string location =
      absl::StrCat("{\"storage\": \"", remote ? "OffChip" : "OnChip",
                   "\", \"replicatedTensorSharding\": \"",
                   sharded ? "On" : "Off", "\"", domain, "}");
  // auto may keep some floating-point weights on-chip (Note [Choosing where
  // weights live]): weights default to on-chip, the remote ones are
  // overridden by name.
  const std::string fallback =
      remote && w.asked() == "auto"
          ? std::string(
                "{\"storage\": \"OnChip\", \"replicatedTensorSharding\": "
                "\"Off\"}")
          : location;
  std::string out = absl::StrCat(
      "{\n  \"weightTensorLocationSettings\": {\n    \"location\": ", fallback,
      ",\n    \"minElementsForOffChip\": 0,\n"
      "    \"minElementsForReplicatedTensorSharding\": 0\n  },\n"
      "  \"tensorLocationSettingsOverride\": {");
  for (int i = 0; i < w.remote_weights_size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "\n" : ",\n", "    ",
                    Quoted(w.remote_weights(i).name()), ": ", location);
  }
  // Not a SessionOptions field: autoshard's own, for the program that
  // loads the weights (PopXL's remote_variable retrieval mode).
  absl::StrAppend(
      &out, w.remote_weights_size() > 0 ? "\n  " : "",
      "},\n  \"autoshard\": {\"retrievalMode\": ",
      Quoted(w.retrieval_mode().empty() ? "one_per_group" : w.retrieval_mode()),
      "}\n}\n");
  return out;
}

}  // namespace autoshard::pod
