// Hostile inputs to autoshard's parsers (issue 13): each test is one fault
// kind that crashed, aborted or was accepted before, with the input that
// showed it.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "base/output_guard.h"
#include "gmock/gmock.h"
#include "graph/model_io.h"
#include "gtest/gtest.h"
#include "sharder/autoshard.h"
#include "sharder/oracle/compile_oracle.h"
#include "sharder/oracle/compile_process.h"
#include "tests/test_util.h"
#include "writers/emit.h"

namespace autoshard {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// yaml-cpp threw TypedBadConversion (an abort: nothing caught it) on a
// sequence, a map or an alias used as a key.
TEST(HostileInputTest, ShardingConfigKeysYamlCannotConvertAreErrors) {
  for (const char* yaml : {
           "- {node: a, device: 0, [x, y]: 1}\n",
           "- {node: a, device: 0, {k: v}: 1}\n",
           "- {node: a, device: 0, ? [x] : 1}\n",
           "- &k [x]\n- {node: a, device: 0, *k : 1}\n",
           "- {node: [a, b], device: 0}\n",
       }) {
    auto points = ParseShardingConfigYaml(yaml, "s.yaml");
    EXPECT_EQ(points.status().code(), absl::StatusCode::kInvalidArgument)
        << yaml;
    EXPECT_THAT(points.status().message(), HasSubstr("s.yaml: ")) << yaml;
  }
  // A device number beyond int32 (and beyond int64) is out of range, not an
  // overflow.
  EXPECT_THAT(ParseShardingConfigYaml(
                  "- {node: a, device: 99999999999999999999999}\n", "s.yaml")
                  .status()
                  .message(),
              HasSubstr("'device' must be an integer from 0 to 2^31-1"));
}

// yaml-cpp's LoadAll yielded empty documents for ever on this input (found
// by fuzz_sharding_config; tests/fuzz_regressions/ keeps it): two
// documents are one too many, said at once.
TEST(HostileInputTest, YamlThatNeverEndsIsRefusedAsSeveralDocuments) {
  auto points = ParseShardingConfigYaml(
      "- node: n1\n,null ddevice: 3\n  stage: 3]\n\n", "hang.yaml");
  EXPECT_THAT(points.status().message(),
              HasSubstr("hang.yaml: expected one YAML document"));
}

// An alias bomb (each level names the one below 9 times: 9^9 = 387420489
// nodes if expanded) is refused without expanding it: yaml-cpp keeps aliases
// as references, and the entries are not {node, device} maps.
TEST(HostileInputTest, YamlAliasBombIsRefusedWithoutExpanding) {
  std::string yaml = "- &l0 [x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    std::string level = "- &l" + std::to_string(i) + " [";
    for (int j = 0; j < 9; ++j) {
      level += (j ? ", *l" : "*l") + std::to_string(i - 1);
    }
    yaml += level + "]\n";
  }
  auto points = ParseShardingConfigYaml(yaml, "bomb.yaml");
  EXPECT_THAT(points.status().message(), HasSubstr("entry 1 has no 'node'"));
}

// A 100,000-entry config is read in linear time and memory (about 2.5 kB
// an entry, yaml-cpp's nodes); applied to a 4-node model, its repeated
// names are refused by name.
TEST(HostileInputTest, AHundredThousandEntryConfigIsReadAndRefusedByName) {
  std::string yaml;
  for (int i = 0; i < 100000; ++i) {
    yaml += "- {node: n" + std::to_string(i % 4) +
            ", device: " + std::to_string(i % 4) + "}\n";
  }
  auto points = ParseShardingConfigYaml(yaml, "big.yaml");
  ASSERT_TRUE(points.ok()) << points.status();
  EXPECT_EQ(points->size(), 100000u);
  EXPECT_EQ((*points)[99999].node, "n3");  // entry 99,999 % 4 = 3
  Options options;
  options.num_ipus = 4;
  auto plan = PlanFromShardingPoints(
      testing::ParseModelText(testing::kResidualModelText), options, *points);
  EXPECT_THAT(plan.status().message(),
              HasSubstr("node 'n0' is named by two sharding points"));
}

// std::stoll threw std::out_of_range on a tile number or byte count beyond
// int64, and std::regex recursed once per character of a long line.
TEST(HostileInputTest, CompilerMessagesWithHugeNumbersOrLongLinesParse) {
  CompileVerdict huge = ParseCompilerOutput(
      1, "Out of memory on tile 99999999999999999999: 5 bytes used\n");
  EXPECT_FALSE(huge.fits);
  EXPECT_EQ(huge.tile, -1);
  EXPECT_EQ(huge.unparsable, "the compile command failed (exit 1)");
  // The first message whose numbers fit is the one read.
  CompileVerdict second = ParseCompilerOutput(
      1,
      "Out of memory on tile 1: 99999999999999999999 bytes\n"
      "Out of memory on tile 7: 640000 bytes used\n");
  EXPECT_EQ(second.tile, 7);
  EXPECT_EQ(second.bytes, 640000);
  // 10 MB of digits on one line, then a real message.
  const std::string digits(10 << 20, '7');
  CompileVerdict long_line =
      ParseCompilerOutput(1, "Out of memory on tile " + digits +
                                 "\nOut of memory on tile 3: 12 bytes\n");
  EXPECT_EQ(long_line.tile, 3);
  EXPECT_EQ(long_line.bytes, 12);
}

// The compile command runs in a process group of its own that is killed at
// the deadline (5 s, long enough for a loaded machine to start the shell):
// `wait` for ever here, and the background `sleep` it started.
TEST(HostileInputTest, ACompileThatNeverEndsIsKilledAtItsDeadline) {
  testing::TempDir dir;
  const fs::path pid_file = dir.path() / "bg.pid";
  absl::StatusOr<CommandResult> r = RunShellCommand(
      "sleep 1000 & echo $! > '" + pid_file.string() + "'; echo started; wait",
      std::chrono::steady_clock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->output, "started\n");
  int bg = 0;
  std::ifstream(pid_file) >> bg;
  ASSERT_GT(bg, 0);
  // The background sleep got SIGKILL with its group: it is gone, or a
  // zombie waiting for init to reap it (once the kernel has delivered the
  // signal: looked at up to 500 times, 10 ms apart).
  std::string state = "?";
  for (int i = 0; i < 500 && !(state.empty() || state == "Z"); ++i) {
    if (i > 0) usleep(10 * 1000);
    std::ifstream stat("/proc/" + std::to_string(bg) + "/stat");
    std::string pid, comm;
    state.clear();
    stat >> pid >> comm >> state;
  }
  EXPECT_TRUE(state.empty() || state == "Z") << state;
}

TEST(HostileInputTest, ACompileThatEndsReportsItsExitAndOutput) {
  absl::StatusOr<CommandResult> r = RunShellCommand(
      "echo 'Out of memory on tile 4: 9 bytes'; exit 3",
      std::chrono::steady_clock::now() + std::chrono::seconds(600));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->timed_out);
  EXPECT_TRUE(WIFEXITED(r->wait_status));
  EXPECT_EQ(WEXITSTATUS(r->wait_status), 3);
  EXPECT_EQ(r->output, "Out of memory on tile 4: 9 bytes\n");
}

// y = Relu(x), x float[4,4].
onnx::ModelProto ReluModel() {
  return testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4,4] x) => (float[4,4] y) {
      y = Relu(x)
    })");
}

// LoadModel's error for `m` saved as m.onnx in a fresh folder.
std::string LoadError(const onnx::ModelProto& m) {
  testing::TempDir dir;
  std::ofstream(dir.path() / "m.onnx", std::ios::binary)
      << m.SerializeAsString();
  return std::string(LoadModel(dir.path() / "m.onnx").status().message());
}

// A training_info graph's external data was not checked: a location
// leading outside the model's folder there was accepted.
TEST(HostileInputTest, TrainingInfoExternalDataIsChecked) {
  onnx::ModelProto m = ReluModel();
  testing::AddExternalWeight(
      m.mutable_training_info()->Add()->mutable_algorithm(), "secret",
      "../outside/secret.bin", 0);
  EXPECT_THAT(LoadError(m),
              HasSubstr("tensor 'secret': external data location "
                        "'../outside/secret.bin' has a '..' component"));
}

// A function body's sparse initializer is walked too (a Constant's
// sparse_value inside a model-local function).
TEST(HostileInputTest, FunctionSparseConstantExternalDataIsChecked) {
  onnx::ModelProto m = ReluModel();
  onnx::NodeProto* c = m.add_functions()->add_node();
  c->set_op_type("Constant");
  onnx::AttributeProto* a = c->add_attribute();
  a->set_name("sparse_value");
  a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  onnx::GraphProto holder;
  testing::AddExternalWeight(&holder, "v", "/etc/passwd", 0);
  *a->mutable_sparse_tensor()->mutable_values() = holder.initializer(0);
  EXPECT_THAT(LoadError(m), HasSubstr("'/etc/passwd' is absolute"));
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A --split-dir failure after the model and plan were renamed into place
// used to delete them, and they had replaced the user's earlier files:
// OutputBackup puts back exactly the earlier files (same inode) and removes
// the files that did not exist before.
TEST(HostileInputTest, OutputBackupRestoresEarlierFilesExactly) {
  testing::TempDir dir;
  const fs::path old_file = dir.path() / "m.sharded.onnx";
  const fs::path new_file = dir.path() / "m.plan.json";
  std::ofstream(old_file) << "earlier";
  struct stat before;
  ASSERT_EQ(::stat(old_file.c_str(), &before), 0);
  {
    OutputBackup backup;
    ASSERT_TRUE(backup.Keep(old_file).ok());
    ASSERT_TRUE(backup.Keep(new_file).ok());
    ASSERT_TRUE(WriteFileAtomically(old_file, "new model").ok());
    ASSERT_TRUE(WriteFileAtomically(new_file, "new plan").ok());
    backup.Restore();
  }
  EXPECT_EQ(ReadFile(old_file), "earlier");
  struct stat after;
  ASSERT_EQ(::stat(old_file.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_FALSE(fs::exists(new_file));
  // Only the earlier file is left: no backup names.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()),
                          fs::directory_iterator()),
            1);
  {
    OutputBackup backup;
    ASSERT_TRUE(backup.Keep(old_file).ok());
    ASSERT_TRUE(WriteFileAtomically(old_file, "new model").ok());
    backup.Commit();
  }
  EXPECT_EQ(ReadFile(old_file), "new model");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()),
                          fs::directory_iterator()),
            1);
}

// A Loop whose trip count is 2^62 (4611686018427387904): neither the FLOPs
// (body x 2^62) nor the scan output's length (2^62 rows) are taken from it;
// the plan is made in bounded time, the body costed once and listed.
TEST(HostileInputTest, ALoopOfTwoToTheSixtyTwoTripsIsCostedOnce) {
  onnx::ModelProto m = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (bool cond, float[1,4] x) => (float[1,4] y, float[?,1,4] s)
        <int64 trips = {4611686018427387904}> {
      y, s = Loop (trips, cond, x) <body = b (int64 i, bool c, float[1,4] v)
                                       => (bool c2, float[1,4] v2,
                                           float[1,4] out) {
        c2 = Identity(c)
        v2 = Add(v, x)
        out = Identity(v2)
      }>
    })");
  Options options;
  options.num_ipus = 1;
  absl::StatusOr<Plan> plan = PlanModel(m, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // Body: Identity 0 + Add 4 (1x4 elements) + Identity 0 = 4 FLOPs, once.
  EXPECT_EQ(plan->proto.summary().total_flops(), 4);
  EXPECT_THAT(plan->proto.warnings(),
              ::testing::Contains(HasSubstr("Loop/Scan bodies costed once")));
}

// Folders made for outputs are removed again when nothing was written.
TEST(HostileInputTest, CreatedFoldersLeftEmptyAreRemoved) {
  testing::TempDir dir;
  {
    CreatedFolders made;
    ASSERT_TRUE(made.Make(dir.path() / "a" / "b" / "c"));
    EXPECT_TRUE(fs::is_directory(dir.path() / "a" / "b" / "c"));
  }
  EXPECT_FALSE(fs::exists(dir.path() / "a"));
  {
    CreatedFolders made;
    ASSERT_TRUE(made.Make(dir.path() / "a" / "b"));
    std::ofstream(dir.path() / "a" / "kept.txt") << "x";
  }
  EXPECT_TRUE(fs::exists(dir.path() / "a" / "kept.txt"));
  EXPECT_FALSE(fs::exists(dir.path() / "a" / "b"));
}

}  // namespace
}  // namespace autoshard
