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
//
// With FAKE_WEIGHTS=variable it first enforces PopART's rule for variables
// when pipelining (willow/src/transforms/pipeline.cpp): an initializer read
// directly by nodes on two __ipu_number values fails with "Can not copy
// variable tensor NAME between virtual graphs when pipelining. All pipeline
// stages using this tensor should be on the same graph." (exit 1).
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
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

// PopART's refusal of a variable read on two IPUs, or "" when none is.
std::string VariableOnTwoIpus(const onnx::ModelProto& model) {
  std::set<std::string> initializers;
  // Floating-point initializers only, as autoshard's rule
  // (solver/strategies/revisit.h): integer shapes and axes stay constants.
  for (const auto& t : model.graph().initializer()) {
    const int type = t.data_type();
    if (type == onnx::TensorProto::FLOAT ||
        type == onnx::TensorProto::FLOAT16 ||
        type == onnx::TensorProto::BFLOAT16 ||
        type == onnx::TensorProto::DOUBLE)
      initializers.insert(t.name());
  }
  std::map<std::string, std::set<int64_t>> ipus_of;
  for (const auto& node : model.graph().node()) {
    int64_t ipu = 0;
    for (const auto& attr : node.attribute()) {
      if (attr.name() == "__ipu_number") ipu = attr.i();
    }
    for (const auto& in : node.input()) {
      if (initializers.count(in) > 0) ipus_of[in].insert(ipu);
    }
  }
  for (const auto& [name, ipus] : ipus_of) {
    if (ipus.size() < 2) continue;
    return "Can not copy variable tensor " + name +
           " between virtual graphs when pipelining. All pipeline stages "
           "using this tensor should be on the same graph.";
  }
  return "";
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
  if (const char* weights = std::getenv("FAKE_WEIGHTS");
      weights != nullptr && std::string(weights) == "variable") {
    const std::string refusal = VariableOnTwoIpus(model);
    if (!refusal.empty()) {
      std::cout << "compiling...\n" << refusal << "\n";
      return 1;
    }
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
