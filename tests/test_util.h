// Helpers shared by the unit tests: ONNX-text models and temporary folders.
#ifndef AUTOSHARD_TESTS_TEST_UTIL_H_
#define AUTOSHARD_TESTS_TEST_UTIL_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "onnx/onnx_pb.h"
#include "sharder/autoshard.h"

namespace autoshard::testing {

// x: float[1,4]; a = MatMul(x, w0); b = Relu(a); c = Add(b, x);
// y = MatMul(c, w1), with w0 and w1 float[4,4] identity matrices (64 B each).
inline constexpr char kResidualModelText[] = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  g (float[1,4] x) => (float[1,4] y) <float[4,4] w0 = {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1},
                                       float[4,4] w1 = {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1}> {
    a = MatMul(x, w0)
    b = Relu(a)
    c = Add(b, x)
    y = MatMul(c, w1)
  })";

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

// Writes `bytes` to the file `path` as they are (binary), replacing it.
void WriteBytes(const std::filesystem::path& path, const std::string& bytes);

// The bytes of the file `path` ("" when it cannot be read).
std::string ReadBytes(const std::filesystem::path& path);

// Whether `dst` shares `src`'s bytes as ShareFile (graph/model_io.h) makes
// them in `dst`'s folder: the same file where that file system hard-links,
// the same bytes in another file where it clones. A copy made by other
// means is told apart only where the file system hard-links.
bool SharesBytes(const std::filesystem::path& src,
                 const std::filesystem::path& dst);

// Adds to `graph` a float[4,4] initializer `name` (64 bytes) whose data is
// external, at `location` and `offset`.
void AddExternalWeight(onnx::GraphProto* graph, const std::string& name,
                       const std::string& location, int64_t offset);

// The fullest tile of any IPU of `plan` (bytes).
int64_t FullestTile(const Plan& plan);

// ipu2 with tiles of `bytes_per_tile`.
proto::DeviceProfile Ipu2WithTiles(int64_t bytes_per_tile);

// Plans `model` with raw, search, optimal and auto under `options` (its
// strategy is replaced) and expects auto to be no worse than each (DESIGN.md
// §4.4): when another fits, auto fits with a bottleneck no larger; when none
// fits, auto's fullest tile is at most the profile's memory band larger, and
// when larger its bottleneck is no larger (Note [Splits that do not fit],
// solver/strategies/auto_strategy.h). Also expects exactly one of auto's
// candidates to be marked chosen, with the plan's figures. Returns the plans
// by strategy (empty when planning failed, which fails the test).
std::map<std::string, Plan> ExpectAutoNoWorse(const onnx::ModelProto& model,
                                              Options options);
}  // namespace autoshard::testing

#endif  // AUTOSHARD_TESTS_TEST_UTIL_H_
