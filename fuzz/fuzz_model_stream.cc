// libFuzzer target: the streaming model reader and writer
// (graph/model_io_stream.h, Note [Weights stay in the file]) against
// protobuf's own parser. Every raw_data of 16 bytes or more stays in the
// "file" (a memfd). Whatever the input, the reader must not crash; when it
// accepts a model, protobuf must accept it too, and the streamed write must
// give exactly the bytes of protobuf's serialization of the whole model.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/model_io.h"
#include "graph/model_io_stream.h"

namespace {

std::string ReadAllFd(int fd) {
  std::string out;
  char buf[65536];
  ssize_t n;
  ::lseek(fd, 0, SEEK_SET);
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, n);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto streamed = autoshard::ParseModelStreaming(bytes, "fuzz", nullptr, 16);
  if (!streamed.ok()) return 0;
  auto whole = autoshard::ParseModelBytes(bytes, "fuzz");
  if (!whole.ok())
    __builtin_trap();  // the reader accepted what protobuf refuses
  const int in = ::memfd_create("in", 0);
  const int out = ::memfd_create("out", 0);
  if (in < 0 || out < 0) std::abort();
  if (::write(in, data, size) != static_cast<ssize_t>(size)) std::abort();
  struct stat st;
  ::fstat(in, &st);
  autoshard::StreamedWeights weights;
  weights.file = absl::StrCat("/proc/self/fd/", in);
  weights.file_bytes = st.st_size;
  weights.file_mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
  weights.tensors = streamed->tensors;
  absl::Status written =
      autoshard::WriteStreamedModel(streamed->model, weights, out, "fuzz");
  if (!written.ok()) __builtin_trap();
  if (ReadAllFd(out) != whole->SerializeAsString()) __builtin_trap();
  ::close(in);
  ::close(out);
  return 0;
}
