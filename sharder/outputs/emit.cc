#include "sharder/outputs/emit.h"

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph/shapes.h"
#include "graph/status_macros.h"
#include "sharder/assumptions.h"
#include "sharder/outputs/json_numbers.h"
#include "sharder/pod/ipu_rows.h"
#include "sharder/pod/pod_planner.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/yaml.h"

namespace autoshard {
namespace {}  // namespace

// "12.3 MB"-style figure for the report (powers of 1000, as tools print).
std::string HumanBytesText(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (bytes >= 1000 && u < 6) {
    bytes /= 1000;
    ++u;
  }
  return u == 0 ? absl::StrFormat("%.0f %s", bytes, units[u])
                : absl::StrFormat("%.2f %s", bytes, units[u]);
}

std::string HumanFlopsText(double flops) {
  const char* units[] = {"", "k", "M", "G", "T", "P"};
  int u = 0;
  while (flops >= 1000 && u < 5) {
    flops /= 1000;
    ++u;
  }
  return u == 0 ? absl::StrFormat("%.0f FLOPs", flops)
                : absl::StrFormat("%.2f %sFLOPs", flops, units[u]);
}

namespace {

std::string HumanBytes(double bytes) { return HumanBytesText(bytes); }
std::string HumanFlops(double flops) { return HumanFlopsText(flops); }

// A yaml-cpp event handler that ignores every event (for counting
// documents).
class IgnoreEvents : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

absl::StatusOr<int> NonNegativeInt(const YAML::Node& node,
                                   absl::string_view key,
                                   absl::string_view what, size_t entry) {
  try {
    const int64_t v = node.as<int64_t>();
    if (v >= 0 && v <= INT32_MAX) return static_cast<int>(v);
  } catch (const std::exception&) {
  }
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": entry ", entry + 1, ": '", key,
                   "' must be an integer from 0 to 2^31-1"));
}

}  // namespace

std::string ShardingConfigYaml(const proto::Plan& plan) {
  YAML::Emitter out;
  out << YAML::BeginSeq;
  for (const auto& pt : plan.sharding_points()) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "node" << YAML::Value
        << YAML::DoubleQuoted << pt.node() << YAML::Key << "device"
        << YAML::Value << pt.ipu() << YAML::Key << "stage" << YAML::Value
        << pt.pipeline_stage() << YAML::EndMap;
  }
  out << YAML::EndSeq;
  std::string text = absl::StrCat(
      "# PopRT manual sharding config written by autoshard: each point claims\n"
      "# its node and the node's unclaimed ancestors for (device, stage); "
      "nodes\n"
      "# no point claims go to the last device and stage.\n",
      plan.sharding_points_size() == 0 ? "[]" : out.c_str(), "\n");
  return text;
}

absl::StatusOr<std::vector<NamedShardingPoint>> ParseShardingConfigYaml(
    absl::string_view text, absl::string_view what) {
  std::vector<YAML::Node> docs;
  try {
    // yaml-cpp 0.7's LoadAll never ends on some malformed text (fuzzing found
    // "- node: n1\n,null ddevice: 3\n  stage: 3]\n": an empty document for
    // ever): count at most two documents first, then load the one.
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    IgnoreEvents ignore;
    int count = 0;
    while (count < 2 && parser.HandleNextDocument(ignore)) ++count;
    if (count == 1) docs.push_back(YAML::Load(std::string(text)));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": not valid YAML: ", e.what()));
  }
  if (docs.size() != 1 || !docs[0].IsSequence()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what,
                     ": expected one YAML document, a list of {node: NAME, "
                     "device: I, stage: S}"));
  }
  const YAML::Node& root = docs[0];
  std::vector<NamedShardingPoint> points;
  // yaml-cpp throws on what its conversions do not expect (a sequence, a
  // map or an alias as a key); nothing it throws leaves this function.
  size_t i = 0;
  try {
    for (; i < root.size(); ++i) {
      const YAML::Node entry = root[i];
      if (!entry.IsMap() || !entry["node"] || !entry["node"].IsScalar()) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": entry ", i + 1, " has no 'node'"));
      }
      for (const auto& kv : entry) {
        const std::string key = kv.first.as<std::string>();
        if (key != "node" && key != "device" && key != "stage") {
          return absl::InvalidArgumentError(
              absl::StrCat(what, ": entry ", i + 1, ": unknown key '", key,
                           "' (node, device, stage)"));
        }
      }
      if (!entry["device"]) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": entry ", i + 1, " has no 'device'"));
      }
      NamedShardingPoint pt;
      pt.node = entry["node"].as<std::string>();
      ASSIGN_OR_RETURN(pt.ipu,
                       NonNegativeInt(entry["device"], "device", what, i));
      pt.pipeline_stage = pt.ipu;
      if (entry["stage"]) {
        ASSIGN_OR_RETURN(pt.pipeline_stage,
                         NonNegativeInt(entry["stage"], "stage", what, i));
      }
      points.push_back(std::move(pt));
    }
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": entry ", i + 1,
        ": not a {node: NAME, device: I, stage: S} map (", e.what(), ")"));
  }
  return points;
}

std::string ProtoJson(const google::protobuf::Message& message) {
  return NumericJson(message);
}

std::string PlanJson(const proto::Plan& plan) { return ProtoJson(plan); }

std::string HumanSeconds(double s) {
  if (s >= 1) return absl::StrFormat("%.3f s", s);
  if (s >= 1e-3) return absl::StrFormat("%.3f ms", s * 1e3);
  return absl::StrFormat("%.3f us", s * 1e6);
}

// A fullest tile's bytes; INT64_MAX stands for a compiler failure that named
// no tile.
std::string TileBytes(int64_t bytes) {
  return bytes == INT64_MAX ? std::string("unknown (no tile named)")
                            : HumanBytes(bytes);
}

namespace {

// The per-IPU margin to the tile capacity and the calibration line; the
// note to compile when some IPU is within the model's uncertainty.
// With more than kMaxMarginsListed IPUs and not `all_ipus`, only the
// smallest margin is printed (a POD-sized report stays readable).
void AppendTrustLines(const proto::Plan& plan, bool all_ipus,
                      std::string* out) {
  constexpr int kMaxMarginsListed = 16;
  const bool smallest_only = !all_ipus && plan.ipus_size() > kMaxMarginsListed;
  int smallest = 0;
  for (int i = 1; i < plan.ipus_size(); ++i) {
    if (plan.ipus(i).memory().tile_margin_bytes() <
        plan.ipus(smallest).memory().tile_margin_bytes())
      smallest = i;
  }
  std::vector<std::string> margins;
  for (const auto& ipu : plan.ipus()) {
    if (smallest_only && ipu.ipu() != plan.ipus(smallest).ipu()) continue;
    const proto::IpuMemory& m = ipu.memory();
    const int64_t capacity = m.max_tile_bytes() + m.tile_margin_bytes();
    margins.push_back(absl::StrFormat(
        "IPU %d %s%s (%.1f%%)", ipu.ipu(), m.tile_margin_bytes() < 0 ? "-" : "",
        HumanBytes(std::abs(m.tile_margin_bytes())),
        capacity > 0 ? 100.0 * static_cast<double>(m.tile_margin_bytes()) /
                           static_cast<double>(capacity)
                     : 0.0));
  }
  absl::StrAppend(
      out, "tile margin (room left on the fullest tile): ",
      smallest_only ? "smallest: " : "", absl::StrJoin(margins, ", "),
      smallest_only
          ? absl::StrCat(" of ", plan.ipus_size(), " IPUs (-v: every IPU)")
          : "",
      "\n");
  absl::StrAppend(out, "calibration: ", plan.calibration(), "\n");
  if (plan.within_model_uncertainty()) {
    absl::StrAppend(out, plan.fits() ? "fits" : "does not fit",
                    " by less than the model's error band: within the model's "
                    "uncertainty; confirm with --compile-cmd 'CMD {model}'\n");
  }
}

}  // namespace

std::string ReportText(const proto::Plan& plan, bool all_ipus) {
  std::string out;
  const auto& s = plan.summary();
  absl::StrAppend(&out, "model: ", plan.model(), "\n");
  absl::StrAppendFormat(
      &out,
      "nodes: %d   IPUs: %d   strategy: %s   precision: %s   batch: %d   "
      "device: %s (available memory proportion %.2f)\n",
      s.num_nodes(), plan.num_ipus(), plan.strategy(), plan.precision(),
      std::max(plan.batch_size(), 1), plan.device(),
      plan.available_memory_proportion());
  if (plan.assumptions_size() > 0) {
    absl::StrAppend(&out, "assumed: ", AssumedText(plan.assumptions()),
                    " (not the model's own; set with --dim NAME=VALUE)\n");
  }
  // constexpr, so that clang checks the format against the arguments.
  static constexpr char row[] =
      "%-4s %7s %11s %11s %11s %11s %11s %11s %11s %4s %14s %11s\n";
  absl::StrAppendFormat(&out, row, "IPU", "nodes", "weights", "code",
                        "exchange", "activations", "temporary", "total",
                        "max tile", "fits", "compute", "stage time");
  int64_t nodes = 0;
  double flops = 0;
  proto::IpuMemory total;
  // At POD scale the IPUs between the ones that matter fold into one row
  // (sharder/pod/ipu_rows.h); the totals count every IPU.
  const std::vector<pod::IpuRun> runs = pod::IpuRows(plan, all_ipus);
  for (const pod::IpuRun& run : runs) {
    const proto::IpuCost ipu = pod::FoldIpus(plan, run);
    const proto::IpuMemory& m = ipu.memory();
    absl::StrAppendFormat(
        &out, row,
        run.first == run.last ? absl::StrCat(run.first)
                              : absl::StrCat(run.first, "-", run.last),
        absl::StrCat(ipu.num_nodes()), HumanBytes(m.weight_bytes()),
        HumanBytes(m.code_bytes()), HumanBytes(m.exchange_bytes()),
        HumanBytes(m.activation_bytes()), HumanBytes(m.temporary_bytes()),
        HumanBytes(m.total_bytes()), HumanBytes(m.max_tile_bytes()),
        m.fits() ? "yes" : "NO", HumanFlops(ipu.flops()),
        HumanSeconds(ipu.stage_time_s()));
  }
  for (const auto& ipu : plan.ipus()) {
    const proto::IpuMemory& m = ipu.memory();
    nodes += ipu.num_nodes();
    flops += ipu.flops();
    total.set_weight_bytes(
        SaturatingAdd(total.weight_bytes(), m.weight_bytes()));
    total.set_code_bytes(SaturatingAdd(total.code_bytes(), m.code_bytes()));
    total.set_exchange_bytes(
        SaturatingAdd(total.exchange_bytes(), m.exchange_bytes()));
    total.set_activation_bytes(
        SaturatingAdd(total.activation_bytes(), m.activation_bytes()));
    total.set_temporary_bytes(
        SaturatingAdd(total.temporary_bytes(), m.temporary_bytes()));
    total.set_total_bytes(SaturatingAdd(total.total_bytes(), m.total_bytes()));
  }
  absl::StrAppendFormat(
      &out, row, "all", absl::StrCat(nodes), HumanBytes(total.weight_bytes()),
      HumanBytes(total.code_bytes()), HumanBytes(total.exchange_bytes()),
      HumanBytes(total.activation_bytes()), HumanBytes(total.temporary_bytes()),
      HumanBytes(total.total_bytes()), "", plan.fits() ? "yes" : "NO",
      HumanFlops(flops), "");
  if (runs.size() < static_cast<size_t>(plan.ipus_size())) {
    absl::StrAppend(&out,
                    "(a row of several IPUs: their sums, fullest tile and "
                    "slowest stage; -v prints every IPU)\n",
                    pod::OverflowSummary(plan));
  }
  AppendTrustLines(plan, all_ipus, &out);
  const proto::Performance& perf = plan.performance();
  absl::StrAppendFormat(
      &out,
      "pipeline: bottleneck %s, throughput %.1f samples/s, latency %s, "
      "lower bound %s (gap %.1f%%), certified bound %s by %s (certified gap "
      "%.1f%%)\n",
      HumanSeconds(perf.bottleneck_s()), perf.throughput_per_s(),
      HumanSeconds(perf.latency_s()), HumanSeconds(perf.lower_bound_s()),
      perf.gap_percent(), HumanSeconds(perf.certified_bound_s()),
      perf.bound_method(), perf.certified_gap_percent());
  absl::StrAppendFormat(
      &out,
      "model weights: %s (%d bytes); a weight read on two IPUs is stored "
      "on both\n",
      HumanBytes(s.total_weight_bytes()), s.total_weight_bytes());
  if (plan.has_search()) {
    const proto::SearchSummary& search = plan.search();
    absl::StrAppendFormat(&out,
                          "search: %d candidates over %d subgraphs in %.3f s, "
                          "stopped: %s; fullest tile %s "
                          "(raw split: %s)%s\n",
                          search.candidates(), search.subgraphs(),
                          search.seconds(), search.stop_reason(),
                          TileBytes(search.max_tile_bytes()),
                          TileBytes(search.raw_max_tile_bytes()),
                          search.optimal_perf() && search.fits()
                              ? "; best bottleneck of the fitting splits"
                              : "");
    bool search_chosen = plan.candidates_size() == 0;
    for (const auto& c : plan.candidates())
      search_chosen |= c.chosen() && c.strategy() == "search";
    if (search.lowered_memory_proportion() && search_chosen) {
      absl::StrAppendFormat(
          &out,
          "fits only with available memory proportion %.1f: compile with "
          "availableMemoryProportion set to %.1f\n",
          search.available_memory_proportion(),
          search.available_memory_proportion());
    }
  }
  if (plan.has_optimal() && !plan.optimal().order().empty()) {
    const proto::OptimalSummary& o = plan.optimal();
    std::vector<std::string> orders;
    for (const auto& t : o.orders()) {
      orders.push_back(absl::StrCat(
          t.order(), " (", t.units(), " units) ",
          t.fits() ? HumanSeconds(t.bottleneck_s()) : "none fits"));
    }
    absl::StrAppendFormat(
        &out,
        "optimal: %s slicing of %s: bottleneck %s; orders: %s; %d "
        "tile-memory evaluations in %.3f s%s\n",
        o.fits()       ? "the fastest fitting"
        : o.complete() ? "no slicing fits; the fastest"
                       : "no fitting slicing found within its budget; the "
                         "fastest",
        o.order(), HumanSeconds(o.bottleneck_s()), absl::StrJoin(orders, ", "),
        o.fit_evaluations(), o.seconds(),
        o.complete() ? ""
                     : " (stopped by --max-search-seconds or its budget of "
                       "evaluations: not proven optimal)");
  }
  if (plan.candidates_size() > 0) {
    std::vector<std::string> parts;
    std::string chosen;
    for (const auto& c : plan.candidates()) {
      parts.push_back(absl::StrCat(
          c.strategy(), " ", HumanSeconds(c.bottleneck_s()),
          c.fits() ? ""
                   : absl::StrCat(" (does not fit: fullest tile ",
                                  TileBytes(c.max_tile_bytes()), ")")));
      if (c.chosen()) chosen = c.strategy();
    }
    absl::StrAppend(&out, "auto: bottlenecks ", absl::StrJoin(parts, ", "),
                    "; chose ", chosen, "\n");
  }
  if (plan.num_ipus_tried_size() > 0) {
    absl::StrAppend(&out, "--num-ipus auto: IPU counts tried: ",
                    absl::StrJoin(plan.num_ipus_tried(), ", "), "\n");
  }
  if (plan.num_ipus_skipped_size() > 0) {
    absl::StrAppend(&out,
                    "--num-ipus auto: skipped, as they never fit (the weights, "
                    "or a node, alone exceed their memory): ",
                    absl::StrJoin(plan.num_ipus_skipped(), ", "), "\n");
  }
  absl::StrAppend(&out, pod::PodReportText(plan));
  if (!plan.fits())
    absl::StrAppend(&out, "does not fit: ", plan.out_of_memory(), "\n");
  absl::StrAppend(
      &out,
      "(memory and times are autoshard's tile-memory and performance models "
      "of the device, not the compiler's figures)\n");
  absl::StrAppendFormat(&out, "sharding points: %d   planned in %.3f s\n",
                        plan.sharding_points_size(), s.planning_s());
  return out;
}

}  // namespace autoshard
