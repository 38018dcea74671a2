#include "costmodel/device_profile.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace autoshard {
namespace {

// Op-class figures shared by the built-in IPUs. They are estimates, not
// published figures: efficiencies in the range Graphcore's benchmarks show
// for conv/matmul-heavy inference (roughly a third to a half of peak) and
// lower for memory-bound ops; code bytes per tile in the range of Poplar's
// vertex code and state for one op on one tile (a few hundred bytes to a few
// kB). Measure and override with --device FILE for a real calibration.
constexpr char kOpClasses[] = R"pb(
  op_classes { op_class: "matmul" efficiency: 0.45 code_bytes_per_tile: 2400 }
  op_classes { op_class: "conv" efficiency: 0.35 code_bytes_per_tile: 3200 }
  op_classes {
    op_class: "elementwise"
    efficiency: 0.10
    code_bytes_per_tile: 300
  }
  op_classes {
    op_class: "normalization"
    efficiency: 0.08
    code_bytes_per_tile: 600
  }
  op_classes { op_class: "reduction" efficiency: 0.08 code_bytes_per_tile: 500 }
  op_classes {
    op_class: "data_movement"
    efficiency: 1.0
    code_bytes_per_tile: 200
  }
  op_classes {
    op_class: "control_flow"
    efficiency: 0.05
    code_bytes_per_tile: 1000
  }
  op_classes { op_class: "other" efficiency: 0.05 code_bytes_per_tile: 500 }
)pb";

// Shared by all built-ins: 0.6 is PopRT's and Poplar's default
// availableMemoryProportion; the per-op overhead (about 2 us for a compute
// set's sync and exchange) and the 64-byte grain are estimates.
constexpr char kCommon[] =
    R"pb(
  available_memory_proportion: 0.6 op_overhead_s: 2e-6 grain_bytes: 64
    )pb";

// Mk1 GC2 (Colossus): 1216 tiles x 256 KiB = 304 MiB In-Processor-Memory;
// 124.5 TFLOP/s fp16 (a C2 card's 250 TFLOP/s for two IPUs); fp32 taken as a
// quarter of fp16, the ratio of GC200's published figures (no GC2 fp32 figure
// was found); 192 GB/s IPU-Link bandwidth between the card's IPUs.
constexpr char kIpu1[] = R"pb(
  name: "ipu1"
  description: "Graphcore Mk1 GC2 (Colossus) IPU"
  tiles_per_ipu: 1216
  bytes_per_tile: 262144
  peak_fp16_flops_per_s: 124.5e12
  peak_fp32_flops_per_s: 31.1e12
  link_bytes_per_s: 192e9
  sources: "Graphcore C2 PCIe card: two GC2 IPUs, 250 TFLOP/s mixed precision, 192 GB/s IPU-Link bandwidth between them (graphcore/legacy_drivers_and_tools)"
  sources: "GC2: 1216 tiles, 256 KiB SRAM per tile (Graphcore IPU Programmer's Guide; DESIGN.md 3.2)"
)pb";

// Mk2 GC200: 1472 tiles x 624 KiB (638,976 B) = 900 MB In-Processor-Memory;
// 250 TFLOP/s fp16, 62.5 TFLOP/s fp32; IPU-Links 320 GB/s chip to chip.
constexpr char kIpu2[] = R"pb(
  name: "ipu2"
  description: "Graphcore Mk2 GC200 IPU (IPU-M2000)"
  tiles_per_ipu: 1472
  bytes_per_tile: 638976
  peak_fp16_flops_per_s: 250e12
  peak_fp32_flops_per_s: 62.5e12
  link_bytes_per_s: 320e9
  sources: "IPU-M2000 / GC200 datasheet: 1472 tiles, 900 MB In-Processor-Memory, 250 TFLOP/s FP16, 62.5 TFLOP/s FP32, IPU-Links 320 GB/s"
  sources: "638,976 bytes per tile: the constant in PopRT's auto-sharding tool (seed 001)"
)pb";

// Bow IPU (C600 card, Bow-2000): GC200's memory and tiles, wafer-on-wafer
// clock: 350 TFLOP/s fp16, 87.5 TFLOP/s fp32.
constexpr char kIpu21[] = R"pb(
  name: "ipu21"
  description: "Graphcore Bow IPU (Bow-2000, C600)"
  tiles_per_ipu: 1472
  bytes_per_tile: 638976
  peak_fp16_flops_per_s: 350e12
  peak_fp32_flops_per_s: 87.5e12
  link_bytes_per_s: 320e9
  sources: "Bow-2000 datasheet: Bow IPU 1472 tiles, 900 MB In-Processor-Memory, 350 TFLOP/s FP16, 87.5 TFLOP/s FP32, IPU-Links 320 GB/s"
)pb";

// Keeps the text-format parser's messages (instead of protobuf's default of
// printing them on stderr) for the error autoshard returns.
class CollectErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (first_.empty())
      first_ = absl::StrCat("line ", line + 1, ":", column + 1, ": ", message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

// Parses a text-format profile; does not validate it.
absl::StatusOr<proto::DeviceProfile> ParseText(const std::string& text,
                                               absl::string_view what) {
  proto::DeviceProfile profile;
  google::protobuf::TextFormat::Parser parser;
  CollectErrors errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &profile)) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": not a text-format DeviceProfile (see proto/device.proto): ",
        errors.first()));
  }
  return profile;
}

absl::StatusOr<proto::DeviceProfile> Validated(proto::DeviceProfile profile,
                                               absl::string_view what) {
  if (absl::Status s = ValidateDeviceProfile(profile); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", s.message()));
  }
  return profile;
}

}  // namespace

std::vector<std::string> BuiltinDeviceNames() {
  return {"ipu1", "ipu2", "ipu21"};
}

absl::StatusOr<proto::DeviceProfile> LoadDeviceProfile(
    absl::string_view name_or_path) {
  const char* chip = name_or_path == "ipu1"    ? kIpu1
                     : name_or_path == "ipu2"  ? kIpu2
                     : name_or_path == "ipu21" ? kIpu21
                                               : nullptr;
  if (chip != nullptr) {
    // Built-ins: common figures, op classes, then the chip's own.
    auto parsed =
        ParseText(absl::StrCat(kCommon, kOpClasses, chip), name_or_path);
    if (!parsed.ok()) return parsed.status();
    return Validated(*std::move(parsed), name_or_path);
  }
  std::error_code ec;
  const std::filesystem::path path{std::string(name_or_path)};
  if (std::filesystem::exists(path, ec) &&
      !std::filesystem::is_regular_file(path, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--device '", name_or_path, "' is not a regular file"));
  }
  std::ifstream in{std::string(name_or_path)};
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("--device '", name_or_path,
                     "' is neither a built-in profile (ipu1, ipu2, ipu21) nor "
                     "a readable file"));
  }
  std::stringstream text;
  text << in.rdbuf();
  // Validated after the merge: a file with a base sets only some fields.
  auto parsed = ParseText(text.str(), name_or_path);
  if (!parsed.ok()) return parsed.status();
  const proto::DeviceProfile& file = *parsed;
  proto::DeviceProfile profile;
  if (!file.base().empty()) {
    if (file.base() != "ipu1" && file.base() != "ipu2" &&
        file.base() != "ipu21") {
      return absl::InvalidArgumentError(
          absl::StrCat(name_or_path, ": base '", file.base(),
                       "' is not a built-in profile (ipu1, ipu2, ipu21)"));
    }
    auto base = LoadDeviceProfile(file.base());
    if (!base.ok()) return base.status();
    profile = *std::move(base);
    profile.clear_sources();
    profile.clear_description();
    if (file.op_classes_size() > 0) profile.clear_op_classes();
  }
  // Merged as text so a field the file sets to 0 overrides the base too.
  google::protobuf::TextFormat::Parser merger;
  CollectErrors merge_errors;
  merger.RecordErrorsTo(&merge_errors);
  if (!merger.MergeFromString(text.str(), &profile)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name_or_path, ": ", merge_errors.first()));
  }
  if (file.name().empty()) {
    profile.set_name(file.base().empty()
                         ? std::string(name_or_path)
                         : absl::StrCat(file.base(), " as in ", name_or_path));
  }
  return Validated(std::move(profile), name_or_path);
}

absl::Status ValidateDeviceProfile(const proto::DeviceProfile& p) {
  auto bad = [](absl::string_view field, absl::string_view rule) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be ", rule));
  };
  // Bounds keep the tile map's arrays and byte sums far from overflow.
  if (p.tiles_per_ipu() <= 0 || p.tiles_per_ipu() > (1 << 20)) {
    return bad("tiles_per_ipu", "in 1..1048576");
  }
  if (p.bytes_per_tile() <= 0 || p.bytes_per_tile() > (int64_t{1} << 40)) {
    return bad("bytes_per_tile", "in 1..2^40");
  }
  // Every time is FLOPs / (peak x efficiency) + ops x overhead + bytes /
  // link rate, summed over a graph: the ranges keep each term, and sums of
  // millions of them, finite (FLOPs and bytes stay below 1e30, so a time
  // stays below 1e36 s), and no range excludes a real chip (1 MFLOP/s to 1
  // EFLOP/s, 1 kB/s to 1 PB/s, an overhead up to 1 s per op). An infinite or
  // NaN time made the optimal strategy index out of bounds (FromCuts).
  auto in = [](double x, double lo, double hi) { return x >= lo && x <= hi; };
  if (!in(p.peak_fp16_flops_per_s(), 1e6, 1e18))
    return bad("peak_fp16_flops_per_s", "in 1e6..1e18");
  if (!in(p.peak_fp32_flops_per_s(), 1e6, 1e18))
    return bad("peak_fp32_flops_per_s", "in 1e6..1e18");
  if (!in(p.link_bytes_per_s(), 1e3, 1e15))
    return bad("link_bytes_per_s", "in 1e3..1e15");
  if (!(p.available_memory_proportion() >= 1e-6 &&
        p.available_memory_proportion() <= 1)) {
    return bad("available_memory_proportion", "in [1e-6, 1]");
  }
  if (!in(p.op_overhead_s(), 0, 1)) return bad("op_overhead_s", "in 0..1");
  if (p.grain_bytes() <= 0 || p.grain_bytes() > p.bytes_per_tile()) {
    return bad("grain_bytes", "in 1..bytes_per_tile");
  }
  for (const auto& c : p.op_classes()) {
    if (!in(c.efficiency(), 1e-6, 1)) {
      return bad(absl::StrCat("op_classes '", c.op_class(), "' efficiency"),
                 "in [1e-6, 1]");
    }
    if (c.code_bytes_per_tile() < 0 ||
        c.code_bytes_per_tile() > (int64_t{1} << 40)) {
      return bad(
          absl::StrCat("op_classes '", c.op_class(), "' code_bytes_per_tile"),
          "in 0..2^40");
    }
  }
  return absl::OkStatus();
}

const proto::OpClassProfile& OpClassOf(const proto::DeviceProfile& profile,
                                       absl::string_view op_class) {
  const proto::OpClassProfile* other = nullptr;
  for (const auto& c : profile.op_classes()) {
    if (c.op_class() == op_class) return c;
    if (c.op_class() == "other") other = &c;
  }
  if (other != nullptr) return *other;
  static const proto::OpClassProfile* const kNeutral = [] {
    auto* c = new proto::OpClassProfile;
    c->set_op_class("other");
    c->set_efficiency(1.0);
    return c;
  }();
  return *kNeutral;
}

}  // namespace autoshard
