// libFuzzer target: device-profile text -> LoadDeviceProfile (parse, merge
// with a base, validate) -> plan a small model on the profile, so that a
// profile that validates but makes times inf or NaN is found.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "costmodel/device_profile.h"
#include "fuzz/fuzz_util.h"
#include "sharder/autoshard.h"

namespace autoshard {
namespace {

const onnx::ModelProto& Model() {
  static const onnx::ModelProto model = fuzz::NamedModel(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[1,3,16,16] x, float[8,3,3,3] w) => (float y) {
        a = Conv <pads = [1, 1, 1, 1]> (x, w)
        b = Relu(a)
        c = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (b)
        y = ReduceMean(c)
      })");
  return model;
}

}  // namespace
}  // namespace autoshard

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The profile is read from a file, as --device reads it: one temporary
  // file, rewritten for each input (mkstemp's name ends in six random
  // letters, never a built-in profile's name).
  static const std::string path = [] {
    std::string p = "/tmp/autoshard_fuzz_device_XXXXXX";
    const int fd = mkstemp(p.data());
    if (fd >= 0) close(fd);
    return p;
  }();
  const int fd = open(path.c_str(), O_WRONLY | O_TRUNC);
  if (fd < 0) return 0;
  const bool written = write(fd, data, size) == static_cast<ssize_t>(size);
  close(fd);
  if (!written) return 0;
  auto profile = autoshard::LoadDeviceProfile(path);
  if (!profile.ok()) return 0;
  for (const char* strategy : {"raw", "optimal", "search"}) {
    autoshard::Options options;
    options.device = *profile;
    options.num_ipus = 2;
    options.strategy = strategy;
    options.max_search_s = 0.05;
    options.max_candidates = 50;
    (void)autoshard::PlanModel(autoshard::Model(), options);
  }
  return 0;
}
