#include "costmodel/builtin_profiles.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace autoshard::internal {
namespace {

// Note [Calibrated constants]
// Fitted by bench/calibration_fit to the facts of
// costmodel/calibration/facts.textproto (docs/calibration.md §3 gives the
// procedure, the inputs and the before/after table). Times are fitted on the
// c600 profile and carried to the other chips in cycles: a chip's clock is
// taken as 1.85 GHz x its peak / 350 TFLOP/s (the Bow-2000's 350 at 1.85
// GHz; same 1,472 tiles), so the C600 runs at about 1.48 GHz.
// - efficiencies, per-op overheads (matmul and conv 2,655 cycles, the
//   other classes 1,344; data_movement 950 cycles plus its output bytes at
//   2,193 bytes per cycle), the work grains (matmul and conv 134 B,
//   elementwise, normalization and reduction 67 B: an op takes as long as
//   its busiest tile, ceil(output / (1,472 x grain)) grains, SmallWorkFactor)
//   and the step's fixed time (41,672 cycles: host sync per batch): fitted
//   together to the 9 fitted single-IPU throughput and latency facts (PopRT
//   and ByteMLPerf on a C600: ResNet-50 b1, b32, b80; BERT-Base b16;
//   BERT-Large b18; ViT-B/16 b8; Swin-Tiny b24; RoFormerV2 b1 latency and
//   b356), each on the tiles its run left to the model (its I/O tiles, 0 to
//   64, hold none); 4 more are held out (docs/calibration.md §1).
//   control_flow and other: estimates (no fact).
// - matmul and conv code: the auto-pipeline test's Dense 4096 -> 1024 layer
//   (vertex code 3.4 MiB over 1,472 tiles: 2,421 B codelets; exchange code
//   360 KiB + vertex state 178 KiB over the 1,024 tiles its output spans:
//   538 B per op). Poplar runs matmuls as convolutions (poplin), so conv
//   takes matmul's figures.
// - per-tile fixed bytes 2,074: that report's control code (100 KiB) and what
//   no listed category holds, less its activations, over 1,472 tiles.
// - elementwise, normalization, reduction, data_movement and other code:
//   17 B per op per tile, half the most (35 B) with which every "fits" fact
//   still fits (no report measures it); control_flow: an estimate.
// - copies: Graphcore's auto-pipeline cost model (ipu_tensorflow_addons
//   auto_pipeline README): 70 GB/s plus 3,000 cycles per IPU-to-IPU copy.
constexpr double kOverheadCycles = 1344;
constexpr double kMacOverheadCycles = 2655;
constexpr double kDataOverheadCycles = 950;
constexpr double kDataBytesPerCycle = 2193;
constexpr double kTransferCycles = 3000;
constexpr double kStepCycles = 41672;

// The op classes at a clock of `hz`.
std::string OpClasses(double hz) {
  return absl::StrFormat(
      R"pb(
        op_classes {
          op_class: "matmul"
          efficiency: 0.502
          code_bytes_per_tile: 538
          codelet_bytes_per_tile: 2421
          op_overhead_s: %.4g
          work_grain_bytes: 134
        }
        op_classes {
          op_class: "conv"
          efficiency: 0.476
          code_bytes_per_tile: 538
          codelet_bytes_per_tile: 2421
          op_overhead_s: %.4g
          work_grain_bytes: 134
        }
        op_classes {
          op_class: "elementwise"
          efficiency: 0.071
          code_bytes_per_tile: 17
          work_grain_bytes: 67
        }
        op_classes {
          op_class: "normalization"
          efficiency: 0.079
          code_bytes_per_tile: 17
          work_grain_bytes: 67
        }
        op_classes {
          op_class: "reduction"
          efficiency: 0.081
          code_bytes_per_tile: 17
          work_grain_bytes: 67
        }
        op_classes {
          op_class: "data_movement"
          efficiency: 1.0
          code_bytes_per_tile: 17
          op_overhead_s: %.4g
          output_bytes_per_s: %.4g
        }
        op_classes {
          op_class: "control_flow"
          efficiency: 0.05
          code_bytes_per_tile: 1000
        }
        op_classes {
          op_class: "other"
          efficiency: 0.05
          code_bytes_per_tile: 17
        }
        op_overhead_s: %.4g
        transfer_fixed_s: %.4g
        step_fixed_s: %.4g
      )pb",
      kMacOverheadCycles / hz, kMacOverheadCycles / hz,
      kDataOverheadCycles / hz, kDataBytesPerCycle * hz, kOverheadCycles / hz,
      kTransferCycles / hz, kStepCycles / hz);
}

// Shared by all built-ins: 0.6 is PopRT's and Poplar's default
// availableMemoryProportion; the 64-byte grain is an estimate.
constexpr char kCommon[] =
    R"pb(
  available_memory_proportion: 0.6 grain_bytes: 64 tile_fixed_bytes: 2074
    )pb";

// The calibration line of the Mk2/Bow profiles.
// The throughput band is the held-out facts' 90th percentile |error|,
// rounded up to a whole percent (tests/calibration_test.cc checks it); the
// coverage is what the 13 time facts span.
std::string Calibrated(absl::string_view chip) {
  return absl::StrCat(
      "calibration { status: \"", chip,
      ": fitted to 9 single-IPU throughput/latency runs on a C600 (PopRT, "
      "ByteMLPerf; batch 1 to 356), 4 held out, 4 fits facts and one Poplar "
      "memory report (docs/calibration.md)\" "
      "throughput_error_band: 0.13 memory_error_band: 0.15 "
      "min_batch: 1 max_batch: 356 precisions: \"fp16\" max_ipus: 1 "
      "op_classes: [\"conv\", \"data_movement\", \"elementwise\", "
      "\"matmul\", \"normalization\", \"reduction\"] }");
}

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
  calibration {
    status: "ipu1: not calibrated (no Mk1 figure); the Mk2 fit's constants at 1.6 GHz"
    throughput_error_band: 0.5
    memory_error_band: 0.3
  }
)pb";

// Mk2 GC200: 1472 tiles x 624 KiB (638,976 B) = 900 MB In-Processor-Memory;
// 250 TFLOP/s fp16, 62.5 TFLOP/s fp32.
constexpr char kIpu2[] = R"pb(
  name: "ipu2"
  description: "Graphcore Mk2 GC200 IPU (IPU-M2000)"
  tiles_per_ipu: 1472
  bytes_per_tile: 638976
  peak_fp16_flops_per_s: 250e12
  peak_fp32_flops_per_s: 62.5e12
  link_bytes_per_s: 70e9
  sources: "IPU-M2000 / GC200 datasheet: 1472 tiles, 900 MB In-Processor-Memory, 250 TFLOP/s FP16, 62.5 TFLOP/s FP32"
  sources: "638,976 bytes per tile: the constant in PopRT's auto-sharding tool (seed 001)"
  sources: "copies: 70 GB/s + 3,000 cycles per IPU-to-IPU transfer (ipu_tensorflow_addons auto_pipeline README)"
  streaming_memory_bytes_per_machine: 128000000000
  ipus_per_machine: 4
  streaming_memory_bytes_per_s: 20e9
  remote_loads_overlap_compute: false
  streaming_memory_source: "128 GB of Streaming Memory per IPU-M2000 of 4 IPUs as shipped (issue 30, from Graphcore's IPU-M2000 product page; DDR DIMMs up to 448 GB); 20 GB/s per IPU is an ESTIMATE (no published per-IPU Streaming Memory bandwidth was checked); loads do not overlap compute: PopXL's remote_load is an op in the program's sequence (seed 000), overlap needs I/O tiles the plan does not set up"
)pb";

// Bow IPU (Bow-2000): GC200's memory and tiles, wafer-on-wafer clock: 350
// TFLOP/s fp16, 87.5 TFLOP/s fp32.
constexpr char kIpu21[] = R"pb(
  name: "ipu21"
  description: "Graphcore Bow IPU (Bow-2000)"
  tiles_per_ipu: 1472
  bytes_per_tile: 638976
  peak_fp16_flops_per_s: 350e12
  peak_fp32_flops_per_s: 87.5e12
  link_bytes_per_s: 70e9
  sources: "Bow-2000 datasheet: Bow IPU 1472 tiles, 900 MB In-Processor-Memory, 350 TFLOP/s FP16, 87.5 TFLOP/s FP32"
  sources: "copies: 70 GB/s + 3,000 cycles per IPU-to-IPU transfer (ipu_tensorflow_addons auto_pipeline README)"
  streaming_memory_bytes_per_machine: 256000000000
  ipus_per_machine: 4
  streaming_memory_bytes_per_s: 20e9
  remote_loads_overlap_compute: false
  streaming_memory_source: "up to 256 GB of Streaming Memory per Bow-2000 of 4 IPUs (issue 30, from Graphcore's Bow-2000 datasheet); 20 GB/s per IPU is an ESTIMATE, as ipu2's; loads do not overlap compute (PopXL's remote_load in sequence, seed 000)"
)pb";

// C600 PCIe card (Bow architecture, ipu_version ipu21): ByteMLPerf's IPU
// backend README gives 280 TFLOP/s fp16 (560 fp8), 900 MB, 1,472 tiles and
// four IPU-Links totalling 1 Tbps; fp32 is taken as a quarter of fp16 (the
// ratio of every other Graphcore figure; no C600 fp32 figure was found).
constexpr char kC600[] = R"pb(
  name: "c600"
  description: "Graphcore C600 PCIe card (Bow IPU, ipu21)"
  tiles_per_ipu: 1472
  bytes_per_tile: 638976
  peak_fp16_flops_per_s: 280e12
  peak_fp32_flops_per_s: 70e12
  link_bytes_per_s: 70e9
  sources: "ByteMLPerf byte_infer_perf/general_perf/backends/IPU/README.md: C600, Bow architecture, 280 TFLOP/s FP16, 560 TFLOP/s FP8, 900 MB In-Processor-Memory, 1472 tiles, 4 IPU-Links 1 Tbps"
  sources: "PopRT's benchmarks compile with ipu_version ipu21 (C600)"
  sources: "copies: 70 GB/s + 3,000 cycles per IPU-to-IPU transfer (ipu_tensorflow_addons auto_pipeline README)"
)pb";

}  // namespace

std::string BuiltinProfileText(absl::string_view name) {
  // Clocks: 1.85 GHz x peak / 350 TFLOP/s (Note [Calibrated constants]);
  // GC2's 1.6 GHz is its datasheet's.
  if (name == "ipu1") return absl::StrCat(kCommon, OpClasses(1.6e9), kIpu1);
  if (name == "ipu2") {
    return absl::StrCat(kCommon, OpClasses(1.85e9 * 250 / 350), kIpu2,
                        Calibrated("ipu2"));
  }
  if (name == "ipu21") {
    return absl::StrCat(kCommon, OpClasses(1.85e9), kIpu21,
                        Calibrated("ipu21"));
  }
  if (name == "c600") {
    return absl::StrCat(kCommon, OpClasses(1.85e9 * 280 / 350), kC600,
                        Calibrated("c600"));
  }
  return "";
}

}  // namespace autoshard::internal
