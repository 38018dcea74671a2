// Helpers shared by the unit tests: ONNX-text models and temporary folders.
#ifndef AUTOSHARD_TESTS_TEST_UTIL_H_
#define AUTOSHARD_TESTS_TEST_UTIL_H_

#include <filesystem>
#include <string>
#include <string_view>

#include "onnx/onnx_pb.h"

namespace autoshard::testing {

// Parses a model in ONNX's text syntax (onnx/defs/parser.h). Fails the
// current test (and returns an empty model) when the text does not parse.
// ONNX 1.12's syntax has no node names: nodes are named "n0", "n1", ... in
// file order unless `name_nodes` is false.
onnx::ModelProto ParseModelText(std::string_view text, bool name_nodes = true);

// A fresh empty folder under the system temporary folder, removed when the
// object is destroyed.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace autoshard::testing

#endif  // AUTOSHARD_TESTS_TEST_UTIL_H_
