// A stand-in for a Poplar compile, for the --compile-cmd tests: reads an
// annotated model and fails like the compiler when IPU 0 holds more than
// $FAKE_LIMIT nodes (default 30): "Out of memory on tile 17: <700000 + 1000 x
// the excess> bytes used but tiles only have 638976 bytes of memory". With
// FAKE_MODE=variable it fails with Poplar's variable-data message instead.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "onnx/onnx_pb.h"

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
