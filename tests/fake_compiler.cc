// A stand-in for a Poplar compile, for the --compile-cmd tests: reads an
// annotated model and fails like the compiler when IPU 0 holds more than
// $FAKE_LIMIT nodes (default 30): "Out of memory on tile 17: <700000 + 1000 x
// the excess> bytes used but tiles only have 638976 bytes of memory". With
// FAKE_MODE=variable it fails with Poplar's variable-data message instead.
//
// With FAKE_DEVICE=PROFILE (a built-in name or a text-format profile file:
// the chip's hidden constants) it plays that chip instead: it costs the
// annotated split with autoshard's tile-memory model under PROFILE (at
// FAKE_PRECISION, fp32 or fp16; AUTOSHARD_AVAILABLE_MEMORY_PROPORTION when
// set) and fails with "Out of memory on tile T: M bytes ..." for the first
// IPU that overflows, else prints "fullest tile T: M bytes" per IPU and
// exits 0, as a wrapper around a real compile that prints its memory
// report's fullest tiles would (docs/calibration.md §6).
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/device_profile.h"
#include "onnx/onnx_pb.h"
#include "sharder/prepare.h"

namespace {

// Plays the chip of profile `device` on `model`: the exit code.
int PlayChip(const onnx::ModelProto& model, const std::string& device) {
  auto profile = autoshard::LoadDeviceProfile(device);
  if (!profile.ok()) {
    std::cerr << "fake_compiler: " << profile.status() << "\n";
    return 2;
  }
  autoshard::Options options;
  options.device = *profile;
  const char* precision = std::getenv("FAKE_PRECISION");
  if (precision != nullptr && std::string(precision) == "fp16")
    options.precision = autoshard::Precision::kFp16;
  if (const char* amp = std::getenv("AUTOSHARD_AVAILABLE_MEMORY_PROPORTION");
      amp != nullptr && std::atof(amp) > 0) {
    options.available_memory_proportion = std::atof(amp);
  }
  auto prepared = autoshard::internal::Prepare(model, options);
  if (!prepared.ok()) {
    std::cerr << "fake_compiler: " << prepared.status() << "\n";
    return 2;
  }
  std::vector<int32_t> ipu_of_node(model.graph().node_size(), 0);
  int32_t num_ipus = 1;
  for (int i = 0; i < model.graph().node_size(); ++i) {
    for (const auto& attr : model.graph().node(i).attribute()) {
      if (attr.name() == "__ipu_number")
        ipu_of_node[i] = static_cast<int32_t>(attr.i());
    }
    num_ipus = std::max(num_ipus, ipu_of_node[i] + 1);
  }
  autoshard::DeviceModel chip(prepared->analysis->problem,
                              prepared->analysis->device, options.precision);
  std::string report;
  for (int32_t d = 0; d < num_ipus; ++d) {
    const autoshard::IpuMemory m = chip.EvaluateMemory(ipu_of_node, d);
    if (!m.fits) {
      std::cout << "compiling...\n" << chip.OutOfMemoryMessage(d, m) << "\n";
      return 1;
    }
    report +=
        "fullest tile " +
        std::to_string(int64_t{d} * prepared->analysis->device.tiles_per_ipu() +
                       m.max_tile) +
        ": " + std::to_string(m.max_tile_bytes) + " bytes\n";
  }
  std::cout << "compiled\n" << report;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fake_compiler MODEL\n";
    return 2;
  }
  onnx::ModelProto model;
  std::ifstream in(argv[1], std::ios::binary);
  if (!model.ParseFromIstream(&in)) {
    std::cerr << "fake_compiler: cannot read " << argv[1] << "\n";
    return 2;
  }
  if (const char* device = std::getenv("FAKE_DEVICE"))
    return PlayChip(model, device);
  const char* limit_env = std::getenv("FAKE_LIMIT");
  const long limit = limit_env != nullptr ? std::atol(limit_env) : 30;
  long on_ipu0 = 0;
  for (const auto& node : model.graph().node()) {
    for (const auto& attr : node.attribute()) {
      if (attr.name() == "__ipu_number" && attr.i() == 0) ++on_ipu0;
    }
  }
  const char* mode = std::getenv("FAKE_MODE");
  if (mode != nullptr && std::string(mode) == "variable") {
    std::cout << "Cannot fit all variable data onto one or more tiles\n";
    return 1;
  }
  if (on_ipu0 > limit) {
    std::cout << "compiling...\nOut of memory on tile 17: "
              << 700000 + 1000 * (on_ipu0 - limit)
              << " bytes used but tiles only have 638976 bytes of memory\n";
    return 1;
  }
  std::cout << "compiled: " << on_ipu0 << " nodes on IPU 0\n";
  return 0;
}
