// The CLI on a model with external data, made here so the test needs no
// corpus: output in another folder (data cloned or hard-linked), outputs that
// would overwrite the data, and data that is missing.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "graph/model_io.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Runs the autoshard binary with `args`; returns the exit code and puts
// stderr in *err.
int RunCli(const std::string& args, const fs::path& dir, std::string* err) {
  const fs::path err_file = dir / "stderr.txt";
  const std::string cmd = std::string(AUTOSHARD_BINARY) + " " + args +
                          " -q 2>" + err_file.string() + " >/dev/null";
  const int status = std::system(cmd.c_str());
  std::ifstream in(err_file);
  err->assign(std::istreambuf_iterator<char>(in),
              std::istreambuf_iterator<char>());
  return WEXITSTATUS(status);
}

// in/m.onnx: y = MatMul(Relu(x), w1) + ... with two 4x4 float weights in
// in/m.onnx.data (128 bytes), so a 2-IPU split exists.
fs::path WriteExternalModel(const fs::path& dir) {
  onnx::ModelProto m = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[1,4] y) {
      a = MatMul(x, w0)
      b = Relu(a)
      c = Add(b, x)
      y = MatMul(c, w1)
    })");
  for (int i = 0; i < 2; ++i) {
    testing::AddExternalWeight(m.mutable_graph(), "w" + std::to_string(i),
                               "m.onnx.data", 64 * i);
  }
  fs::create_directories(dir / "in");
  std::ofstream(dir / "in" / "m.onnx.data", std::ios::binary)
      << std::string(128, '\0');
  std::ofstream(dir / "in" / "m.onnx", std::ios::binary)
      << m.SerializeAsString();
  return dir / "in" / "m.onnx";
}

TEST(CliExternalDataTest, OutputElsewhereSharesTheData) {
  testing::TempDir dir;
  const fs::path model = WriteExternalModel(dir.path());
  fs::create_directory(dir.path() / "out");
  std::string err;
  ASSERT_EQ(RunCli("shard " + model.string() + " -n 2 -o " +
                       (dir.path() / "out/s.onnx").string(),
                   dir.path(), &err),
            0)
      << err;
  EXPECT_TRUE(testing::SharesBytes(dir.path() / "in/m.onnx.data",
                                   dir.path() / "out/m.onnx.data"));
  // The output loads (its references are valid) and passes the checker.
  EXPECT_TRUE(LoadModel(dir.path() / "out/s.onnx").ok());
  EXPECT_TRUE(CheckModelFile(dir.path() / "out/s.onnx").ok());
}

TEST(CliExternalDataTest, NoOutputMayOverwriteTheData) {
  testing::TempDir dir;
  const fs::path model = WriteExternalModel(dir.path());
  const fs::path data = dir.path() / "in/m.onnx.data";
  std::string err;
  for (std::string flag : {"-o ", "--plan ", "--sharding-config "}) {
    SCOPED_TRACE(flag);
    const std::string out =
        flag == "-o " ? "" : " -o " + (dir.path() / "o.onnx").string();
    EXPECT_EQ(RunCli("shard " + model.string() + " -n 2 " + flag +
                         data.string() + out,
                     dir.path(), &err),
              2);
    EXPECT_THAT(err, HasSubstr("is an input"));
    EXPECT_EQ(fs::file_size(data), 128u);
  }
}

TEST(CliExternalDataTest, MissingDataIsABadInput) {
  testing::TempDir dir;
  const fs::path model = WriteExternalModel(dir.path());
  fs::remove(dir.path() / "in/m.onnx.data");
  std::string err;
  EXPECT_EQ(RunCli("shard " + model.string() + " -n 2", dir.path(), &err), 2);
  EXPECT_THAT(err, HasSubstr("m.onnx.data' is missing"));
  EXPECT_FALSE(fs::exists(dir.path() / "in/m.sharded.onnx"));
}

}  // namespace
}  // namespace autoshard
