#include "writers/emit.h"

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "graph/shapes.h"
#include "pod/ipu_rows.h"
#include "pod/no_fit.h"
#include "writers/json_numbers.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/yaml.h"

namespace autoshard {
namespace {}  // namespace

// "12.3 MB"-style figure for the report (powers of 1000, as tools print):
// the POD layer's BytesText, so the report and the no-fit reasons print
// bytes alike.
std::string HumanBytesText(double bytes) { return pod::BytesText(bytes); }

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
  if (s == 0) return "0 s";
  const double a = std::abs(s);
  if (a >= 1) return absl::StrFormat("%.3f s", s);
  if (a >= 1e-3) return absl::StrFormat("%.3f ms", s * 1e3);
  if (a >= 1e-6) return absl::StrFormat("%.3f us", s * 1e6);
  return absl::StrFormat("%.3f ns", s * 1e9);
}

}  // namespace autoshard
