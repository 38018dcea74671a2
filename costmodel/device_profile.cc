#include "costmodel/device_profile.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "base/step_counts.h"
#include "costmodel/builtin_profiles.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace autoshard {
namespace {

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
  return {"ipu1", "ipu2", "ipu21", "c600"};
}

namespace {

// LoadDeviceProfile's work, which a file's base reuses within one counted
// load.
absl::StatusOr<proto::DeviceProfile> LoadProfile(
    absl::string_view name_or_path) {
  if (const std::string text = internal::BuiltinProfileText(name_or_path);
      !text.empty()) {
    auto parsed = ParseText(text, name_or_path);
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
                     "' is neither a built-in profile (ipu1, ipu2, ipu21, "
                     "c600) nor a readable file"));
  }
  std::stringstream text;
  text << in.rdbuf();
  // Validated after the merge: a file with a base sets only some fields.
  auto parsed = ParseText(text.str(), name_or_path);
  if (!parsed.ok()) return parsed.status();
  const proto::DeviceProfile& file = *parsed;
  proto::DeviceProfile profile;
  if (!file.base().empty()) {
    if (internal::BuiltinProfileText(file.base()).empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          name_or_path, ": base '", file.base(),
          "' is not a built-in profile (ipu1, ipu2, ipu21, c600)"));
    }
    auto base = LoadProfile(file.base());
    if (!base.ok()) return base.status();
    profile = *std::move(base);
    profile.clear_sources();
    profile.clear_description();
    profile.clear_calibration();  // what the base was fitted to is not this
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

}  // namespace

absl::StatusOr<proto::DeviceProfile> LoadDeviceProfile(
    absl::string_view name_or_path) {
  ++ThreadStepCounts().profile_loads;
  return LoadProfile(name_or_path);
}

namespace {

// The calibration's fields (tile_fixed_bytes, transfer_fixed_s, codelets,
// error bands), kept apart from the range checks of the older fields.
absl::Status ValidateCalibratedFields(const proto::DeviceProfile& p) {
  auto bad = [](absl::string_view field, absl::string_view rule) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be ", rule));
  };
  // Not bounded by bytes_per_tile: a chip where nothing fits is valid.
  constexpr int64_t kMaxBytes = int64_t{1} << 40;
  if (p.tile_fixed_bytes() < 0 || p.tile_fixed_bytes() > kMaxBytes)
    return bad("tile_fixed_bytes", "in 0..2^40");
  if (!(p.transfer_fixed_s() >= 0 && std::isfinite(p.transfer_fixed_s())))
    return bad("transfer_fixed_s", "finite and >= 0");
  if (!(p.step_fixed_s() >= 0 && p.step_fixed_s() <= 1))
    return bad("step_fixed_s", "in [0, 1] (seconds per step)");
  for (const auto& c : p.op_classes()) {
    if (c.has_op_overhead_s() &&
        !(c.op_overhead_s() >= 0 && std::isfinite(c.op_overhead_s()))) {
      return bad(absl::StrCat("op_classes '", c.op_class(), "' op_overhead_s"),
                 "finite and >= 0");
    }
    if (!(c.output_bytes_per_s() >= 0 && std::isfinite(c.output_bytes_per_s())))
      return bad(
          absl::StrCat("op_classes '", c.op_class(), "' output_bytes_per_s"),
          "finite and >= 0");
    // At most 1 MiB: with 2^20 tiles the slow-down factor stays below 2^40.
    if (c.work_grain_bytes() < 0 || c.work_grain_bytes() > (1 << 20)) {
      return bad(
          absl::StrCat("op_classes '", c.op_class(), "' work_grain_bytes"),
          "in 0..1048576");
    }
    if (c.codelet_bytes_per_tile() < 0 ||
        c.codelet_bytes_per_tile() > kMaxBytes) {
      return bad(absl::StrCat("op_classes '", c.op_class(),
                              "' codelet_bytes_per_tile"),
                 "in 0..2^40");
    }
  }
  const proto::Calibration& k = p.calibration();
  for (double band : {k.throughput_error_band(), k.memory_error_band()}) {
    if (!(band >= 0 && band <= 1))
      return bad("calibration error bands", "in [0, 1]");
  }
  if (k.min_batch() < 0 || k.max_batch() < k.min_batch() || k.max_ipus() < 0)
    return bad("calibration min_batch, max_batch, max_ipus",
               ">= 0 with min_batch <= max_batch");
  return absl::OkStatus();
}

}  // namespace

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
  if (absl::Status s = ValidateCalibratedFields(p); !s.ok()) return s;
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
