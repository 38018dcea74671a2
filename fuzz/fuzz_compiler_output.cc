// libFuzzer target: a compiler's output -> ParseCompilerOutput (the first
// byte is the exit code).
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "sharder/oracle/compile_oracle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const absl::string_view output(reinterpret_cast<const char*>(data + 1),
                                 size - 1);
  autoshard::CompileVerdict v = autoshard::ParseCompilerOutput(data[0], output);
  // A named tile comes with its bytes, both read as non-negative integers.
  if (v.tile >= 0 && v.bytes < 0) __builtin_trap();
  return 0;
}
