// Fits the built-in profiles' constants to the published facts of
// costmodel/calibration/facts.textproto (docs/calibration.md §3 describes the
// procedure): prints the calibration table (published figure, prediction,
// error) of the built-in profiles as they are, then the fitted constants.
//
//   build/autoshard_calibration_fit [--markdown] [FACTS_FILE]
//
// --markdown: only the table by model and batch (docs/calibration.md §4).
//
// Throughput: a 1-IPU step time is the profile's step_fixed_s plus, per
// node, FLOPs / (peak x efficiency_class) x ceil(out / (tiles x
// work_grain_bytes_class)) x tiles x work_grain_bytes_class / out (out: the
// largest output's bytes; SmallWorkFactor) + op_overhead_class, and
// for data_movement output bytes / their rate (costmodel/device_model.h),
// so each throughput or latency fact reduces to sums over groups of nodes of
// one class and one output size, taken once from the model, on the tiles
// the run left to the model (its I/O tiles hold none: RunProfile); the fit
// minimises Σ (log predicted - log published)^2
// over the "fitted" facts plus 0.01 x Σ (log value - log prior)^2, the prior
// being the estimates before any calibration (a weak pull that only holds
// still what no fact constrains), by coordinate descent with a
// golden-section search per constant. Memory: the Dense layer's report gives
// code and per-tile bytes directly (FitMemory); the "fits" facts bound the
// small ops' code (FitSmallOpCode). The output is frozen by hand into
// costmodel/builtin_profiles.cc (Note [Calibrated constants]).
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "costmodel/device_model.h"
#include "costmodel/device_profile.h"
#include "sharder/prepare.h"
#include "tests/calibration_cases.h"
#include "tests/calibration_models.h"
#include "tests/calibration_table.h"

namespace autoshard {
namespace {

// The constants the throughput fit moves (log scale), in this order: five
// efficiencies, then kOverhead.. below.
const std::vector<std::string> kFitClasses = {"matmul", "conv", "elementwise",
                                              "normalization", "reduction"};
enum : size_t {
  kOverhead = 5,  // op_overhead_s of the vector classes (and other)
  kMacOverhead,   // matmul and conv op_overhead_s
  kDataOverhead,  // data_movement op_overhead_s
  kDataRate,      // data_movement output_bytes_per_s
  kMacGrain,      // matmul and conv work_grain_bytes
  kVectorGrain,   // elementwise, normalization, reduction work_grain_bytes
  kStepFixed,     // step_fixed_s
  kNumParams
};
const char* const kParamNames[] = {"op_overhead_s",
                                   "matmul/conv op_overhead_s",
                                   "data_movement op_overhead_s",
                                   "data_movement output_bytes_per_s",
                                   "matmul/conv work_grain_bytes",
                                   "vector work_grain_bytes",
                                   "step_fixed_s"};

// The nodes of one class with one largest-output size: their time is linear
// in their summed FLOPs, count and output bytes.
struct NodeGroup {
  int cls = -1;  // index into kFitClasses; -1: data_movement; -2: other
  double out_bytes = 0;
  double flops = 0, count = 0, data_bytes = 0;
  double efficiency = 1;  // of an unfitted class (control_flow, other)
};

struct TimeCase {
  std::string id;
  bool fitted = false;
  bool latency = false;    // a latency fact (else throughput)
  double published_s = 0;  // seconds per batch
  double peak = 0;         // FLOP/s at the fact's precision
  double tiles = 0;
  std::vector<NodeGroup> groups;
};

double Grain(const NodeGroup& g, const std::vector<double>& x) {
  if (g.cls == 0 || g.cls == 1) return std::exp(x[kMacGrain]);
  if (g.cls >= 2) return std::exp(x[kVectorGrain]);
  return 0;
}

// The model of costmodel/device_model.h (NodeTime, SmallWorkFactor,
// EvaluatePerformance on one IPU) under the constants x.
double CaseSeconds(const TimeCase& c, const std::vector<double>& x) {
  double t = std::exp(x[kStepFixed]);
  for (const NodeGroup& g : c.groups) {
    if (g.cls == -1) {
      t += g.count * std::exp(x[kDataOverhead]) +
           g.data_bytes / std::exp(x[kDataRate]);
      continue;
    }
    const double eff = g.cls >= 0 ? std::exp(x[g.cls]) : g.efficiency;
    const double grain = Grain(g, x);
    // SmallWorkFactor: the busiest tile's grains over the even share.
    const double full = c.tiles * grain;
    const double factor =
        grain > 0 && g.out_bytes > 0
            ? std::ceil(g.out_bytes / full) * full / g.out_bytes
            : 1.0;
    const bool mac = g.cls == 0 || g.cls == 1;
    t += g.flops / (c.peak * eff) * factor +
         g.count * std::exp(x[mac ? kMacOverhead : kOverhead]);
  }
  return t;
}

// Golden-section minimisation of f on [lo, hi].
double Golden(const std::function<double(double)>& f, double lo, double hi) {
  const double r = (std::sqrt(5.0) - 1) / 2;
  double a = lo, b = hi, c = b - r * (b - a), d = a + r * (b - a);
  for (int i = 0; i < 80; ++i) {
    if (f(c) < f(d)) {
      b = d;
    } else {
      a = c;
    }
    c = b - r * (b - a);
    d = a + r * (b - a);
  }
  return (a + b) / 2;
}

absl::StatusOr<TimeCase> MakeTimeCase(const proto::CalibrationFact& fact,
                                      const proto::DeviceProfile& base) {
  // The chip as the run used it: its I/O tiles hold no model.
  auto run = testing::RunProfile(fact, base);
  if (!run.ok()) return run.status();
  const proto::DeviceProfile& profile = *run;
  auto model = testing::BuildCalibrationModel(fact.model(), fact.batch(),
                                              std::max<int64_t>(fact.seq(), 1));
  if (!model.ok()) return model.status();
  Options options;
  options.device = profile;
  options.precision =
      fact.precision() == "fp16" ? Precision::kFp16 : Precision::kFp32;
  auto prepared = internal::Prepare(*model, options);
  if (!prepared.ok()) return prepared.status();
  TimeCase c;
  c.id = fact.id();
  c.fitted = fact.fitted();
  c.latency = fact.kind() == "latency";
  c.published_s = fact.kind() == "latency"
                      ? fact.figure()
                      : static_cast<double>(fact.batch()) / fact.figure();
  c.peak = options.precision == Precision::kFp16
               ? profile.peak_fp16_flops_per_s()
               : profile.peak_fp32_flops_per_s();
  c.tiles = profile.tiles_per_ipu();
  const ShardingProblem& p = prepared->analysis->problem;
  std::map<std::pair<int, int64_t>, NodeGroup> groups;
  for (int32_t n = 0; n < p.num_nodes(); ++n) {
    if (p.is_constant[n]) continue;
    int cls = -2;
    for (size_t k = 0; k < kFitClasses.size(); ++k) {
      if (p.op_class[n] == kFitClasses[k]) cls = static_cast<int>(k);
    }
    if (p.op_class[n] == "data_movement") cls = -1;
    NodeGroup& g = groups[{cls, p.largest_output_bytes[n]}];
    g.cls = cls;
    g.out_bytes = static_cast<double>(p.largest_output_bytes[n]);
    g.flops += p.flops[n];
    g.count += 1;
    g.data_bytes += static_cast<double>(p.activation_bytes[n]);
    if (cls == -2)
      g.efficiency = OpClassOf(profile, p.op_class[n]).efficiency();
  }
  for (auto& [key, g] : groups) c.groups.push_back(g);
  return c;
}

// The bounds of each constant's log: efficiencies in [0.01, 1], overheads
// in [1 ns, 100 us], the data_movement rate in [100 GB/s, 1 PB/s], grains
// in [1 B, 64 kB], the step's fixed time in [1 ns, 10 ms].
std::pair<double, double> Bounds(size_t k) {
  if (k < kFitClasses.size()) return {std::log(0.01), 0.0};
  switch (k) {
    case kDataRate:
      return {std::log(1e11), std::log(1e15)};
    case kMacGrain:
    case kVectorGrain:
      return {0.0, std::log(65536.0)};
    case kStepFixed:
      return {std::log(1e-9), std::log(1e-2)};
    default:
      return {std::log(1e-9), std::log(1e-4)};
  }
}

std::vector<double> FitTimes(const std::vector<TimeCase>& cases,
                             const std::vector<double>& prior) {
  auto objective = [&](const std::vector<double>& x) {
    double j = 0;
    for (const TimeCase& c : cases) {
      if (!c.fitted) continue;
      const double e = std::log(CaseSeconds(c, x) / c.published_s);
      j += e * e;
    }
    for (size_t k = 0; k < x.size(); ++k)
      j += 0.01 * (x[k] - prior[k]) * (x[k] - prior[k]);
    return j;
  };
  std::vector<double> x = prior;
  for (int sweep = 0; sweep < 60; ++sweep) {
    for (size_t k = 0; k < x.size(); ++k) {
      const auto [lo, hi] = Bounds(k);
      x[k] = Golden(
          [&](double v) {
            std::vector<double> y = x;
            y[k] = v;
            return objective(y);
          },
          lo, hi);
    }
  }
  return x;
}

// From the Dense layer's memory report on an ipu2 (fp32): the matmul class's
// codelets are the vertex code over every tile; its per-op code is the
// internal exchange code and vertex state over the tiles the op spans; the
// per-tile fixed bytes are the control code plus what no listed category
// holds, less the activations the model places, over every tile.
void FitMemory(const proto::CalibrationFact& fact,
               const proto::DeviceProfile& ipu2) {
  auto plan = testing::PlanFact(fact, ipu2);
  if (!plan.ok()) {
    std::printf("memory fit: %s\n", plan.status().ToString().c_str());
    return;
  }
  const int64_t tiles = ipu2.tiles_per_ipu();
  const int64_t out_bytes = fact.batch() * 1024 * 4;  // the MatMul's output
  const int64_t spanned = std::min<int64_t>(
      tiles, (out_bytes + ipu2.grain_bytes() - 1) / ipu2.grain_bytes());
  auto fig = [&](const char* c) { return testing::MemoryFigure(fact, c); };
  const int64_t listed = fig("vertex_code") + fig("internal_exchange_code") +
                         fig("vertex_state") + fig("control_code") +
                         fig("peak_temporaries") + fig("parameters");
  const int64_t activations = plan->proto.ipus(0).memory().activation_bytes();
  std::printf(
      "memory (%s): matmul codelet_bytes_per_tile %lld, code_bytes_per_tile "
      "%lld (over %lld tiles), tile_fixed_bytes %lld\n",
      fact.id().c_str(), static_cast<long long>(fig("vertex_code") / tiles),
      static_cast<long long>(
          (fig("internal_exchange_code") + fig("vertex_state")) / spanned),
      static_cast<long long>(spanned),
      static_cast<long long>(
          (fig("control_code") + fig("total") - listed - activations) / tiles));
}

// The small ops' code (elementwise, normalization, reduction,
// data_movement, other: no report measures it) is bounded by the "fits"
// facts: the largest per-op code_bytes_per_tile with which every published
// run still fits (bisection to 1 byte), halved, so that no fact sits on the
// bound.
void FitSmallOpCode(const proto::CalibrationFacts& facts) {
  auto all_fit = [&](int64_t code) {
    for (const auto& f : facts.facts()) {
      if (f.kind() != "fits") continue;
      auto profile = LoadDeviceProfile(f.device());
      if (!profile.ok()) return false;
      for (auto& c : *profile->mutable_op_classes()) {
        if (c.op_class() != "matmul" && c.op_class() != "conv" &&
            c.op_class() != "control_flow")
          c.set_code_bytes_per_tile(code);
      }
      auto plan = testing::PlanFact(f, *profile);
      if (!plan.ok() || !plan->proto.fits()) return false;
    }
    return true;
  };
  int64_t lo = 0, hi = 2048;  // all_fit(lo); hi: assumed not
  if (!all_fit(lo)) {
    std::printf("small-op code: some fits fact does not fit even at 0\n");
    return;
  }
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    (all_fit(mid) ? lo : hi) = mid;
  }
  std::printf(
      "small-op code_bytes_per_tile: every fits fact fits up to %lld; "
      "fitted %lld\n",
      static_cast<long long>(lo), static_cast<long long>(lo / 2));
}

void PrintTable(const proto::CalibrationFacts& facts, const char* title) {
  std::printf("\n%s\n%-34s %8s %14s %14s %9s %s\n", title, "fact", "device",
              "published", "predicted", "error", "fullest tile");
  for (const auto& f : facts.facts()) {
    auto profile = LoadDeviceProfile(f.device());
    if (!profile.ok()) continue;
    auto plan = testing::PlanFact(f, *profile);
    if (!plan.ok()) {
      std::printf("%-34s %s\n", f.id().c_str(),
                  plan.status().ToString().c_str());
      continue;
    }
    const double predicted = testing::PredictedFigure(f, *plan);
    const double published =
        f.kind() == "fits" ? 1.0
        : f.kind() == "memory"
            ? static_cast<double>(testing::MemoryFigure(f, "total"))
            : f.figure();
    const auto& m = plan->proto.ipus(0).memory();
    const double tiles = profile->tiles_per_ipu();
    std::printf(
        "  per tile: weights %.0f, code %.0f, activations %.0f, temporary "
        "%.0f, exchange %.0f\n",
        static_cast<double>(m.weight_bytes()) / tiles,
        static_cast<double>(m.code_bytes()) / tiles,
        static_cast<double>(m.activation_bytes()) / tiles,
        static_cast<double>(m.temporary_bytes()) / tiles,
        static_cast<double>(m.exchange_bytes()) / tiles);
    std::printf("%-34s %8s %14.6g %14.6g %+8.1f%% %lld of %lld (%.1f%%)\n",
                f.id().c_str(), f.device().c_str(), published, predicted,
                100 * (predicted / published - 1),
                static_cast<long long>(m.max_tile_bytes()),
                static_cast<long long>(profile->bytes_per_tile()),
                100.0 * static_cast<double>(m.max_tile_bytes()) /
                    static_cast<double>(profile->bytes_per_tile()));
  }
}

int Main(int argc, char** argv) {
  bool markdown = false;
  std::string path =
      AUTOSHARD_SOURCE_DIR "/costmodel/calibration/facts.textproto";
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--markdown") {
      markdown = true;
    } else {
      path = argv[i];
    }
  }
  auto facts = testing::LoadCalibrationFacts(path);
  if (!facts.ok()) {
    std::fprintf(stderr, "%s\n", facts.status().ToString().c_str());
    return 2;
  }
  auto rows = testing::TimeErrors(*facts);
  if (!rows.ok()) {
    std::fprintf(stderr, "%s\n", rows.status().ToString().c_str());
    return 1;
  }
  std::printf("%s", testing::CalibrationTableMarkdown(*rows).c_str());
  if (markdown) return 0;
  auto c600 = LoadDeviceProfile("c600");
  auto ipu2 = LoadDeviceProfile("ipu2");
  if (!c600.ok() || !ipu2.ok()) return 2;
  PrintTable(*facts, "with the built-in profiles:");
  FitSmallOpCode(*facts);
  std::vector<TimeCase> cases;
  for (const auto& f : facts->facts()) {
    if (f.kind() == "memory" && f.fitted()) FitMemory(f, *ipu2);
    if (f.kind() != "throughput" && f.kind() != "latency") continue;
    auto c = MakeTimeCase(f, *c600);
    if (!c.ok()) {
      std::fprintf(stderr, "%s\n", c.status().ToString().c_str());
      return 1;
    }
    cases.push_back(*std::move(c));
  }
  // The prior: the estimates before any calibration (matmul 0.45, conv
  // 0.35, elementwise 0.10, normalization and reduction 0.08; 2 us per op,
  // data_movement too) and, for copies that cost nothing but the overhead
  // then, 10 TB/s (the order of the chip's exchange bandwidth); the work
  // grains: 64 B, the tile mapping's grain (grain_bytes); the step's fixed
  // time: 50,000 cycles at the C600's 1.48 GHz, the host transfer's fixed
  // cost in Graphcore's auto-pipeline cost model.
  std::vector<double> prior;
  for (double e : {0.45, 0.35, 0.10, 0.08, 0.08}) prior.push_back(std::log(e));
  for (double v : {2e-6, 2e-6, 2e-6, 1e13, 64.0, 64.0, 50000 / 1.48e9})
    prior.push_back(std::log(v));
  const std::vector<double> x = FitTimes(cases, prior);
  const double hz = 1.85e9 * 280 / 350;  // the C600's clock (Note)
  std::printf("\nfitted (prior):\n");
  for (size_t k = 0; k < kFitClasses.size(); ++k) {
    std::printf("  %s efficiency %.3f (%.3f)\n", kFitClasses[k].c_str(),
                std::exp(x[k]), std::exp(prior[k]));
  }
  for (size_t k = kOverhead; k < kNumParams; ++k) {
    const bool seconds = k != kDataRate && k != kMacGrain && k != kVectorGrain;
    std::printf("  %s %.4g (%.4g)", kParamNames[k - kOverhead], std::exp(x[k]),
                std::exp(prior[k]));
    if (seconds) std::printf(" = %.0f cycles", std::exp(x[k]) * hz);
    if (k == kDataRate) std::printf(" = %.0f B/cycle", std::exp(x[k]) / hz);
    std::printf("\n");
  }
  // The error in the table's sense: predicted over published of the fact's
  // own figure (a rate for throughput, seconds for latency), minus 1.
  for (const TimeCase& c : cases) {
    const double fitted_s = CaseSeconds(c, x);
    const double ratio =
        c.latency ? fitted_s / c.published_s : c.published_s / fitted_s;
    std::printf("  %-34s %s published %.4g s, fitted %.4g s (%+.1f%%)\n",
                c.id.c_str(), c.fitted ? "fit " : "held", c.published_s,
                fitted_s, 100 * (ratio - 1));
  }
  return 0;
}

}  // namespace
}  // namespace autoshard

int main(int argc, char** argv) { return autoshard::Main(argc, argv); }
