#include "tests/test_util.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "costmodel/device_profile.h"
#include "graph/model_io.h"
#include "gtest/gtest.h"
#include "onnx/defs/parser.h"
#include "solver/strategies/auto_strategy.h"

namespace autoshard::testing {

onnx::ModelProto ParseModelText(std::string_view text, bool name_nodes) {
  onnx::ModelProto model;
  std::string owned(text);
  onnx::Status status = onnx::OnnxParser::Parse(model, owned.c_str());
  EXPECT_TRUE(status.IsOK()) << status.ErrorMessage() << "\n" << text;
  if (name_nodes) {
    for (int i = 0; i < model.graph().node_size(); ++i) {
      model.mutable_graph()->mutable_node(i)->set_name("n" + std::to_string(i));
    }
  }
  return model;
}

void WriteBytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string ReadBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TempDir::TempDir() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "autoshard_test_XXXXXX")
          .string();
  char* made = mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

bool SharesBytes(const std::filesystem::path& src,
                 const std::filesystem::path& dst) {
  // How this folder shares a file: a probe pair made and removed.
  const std::filesystem::path probe_src = src.parent_path() / ".probe_src";
  const std::filesystem::path probe = dst.parent_path() / ".probe";
  WriteBytes(probe_src, "p");
  absl::StatusOr<SharedFile> how = ShareFile(probe_src, probe);
  std::error_code ec;
  std::filesystem::remove(probe, ec);
  std::filesystem::remove(probe_src, ec);
  if (!how.ok()) return false;
  if (*how == SharedFile::kHardLinked) {
    return std::filesystem::equivalent(src, dst, ec);
  }
  return !std::filesystem::equivalent(src, dst, ec) &&
         ReadBytes(src) == ReadBytes(dst);
}

void AddExternalWeight(onnx::GraphProto* graph, const std::string& name,
                       const std::string& location, int64_t offset) {
  onnx::TensorProto* w = graph->add_initializer();
  w->set_name(name);
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value(location);
  kv = w->add_external_data();
  kv->set_key("offset");
  kv->set_value(std::to_string(offset));
}

int64_t FullestTile(const Plan& plan) {
  int64_t fullest = 0;
  for (const auto& ipu : plan.proto.ipus())
    fullest = std::max(fullest, ipu.memory().max_tile_bytes());
  return fullest;
}

proto::DeviceProfile Ipu2WithTiles(int64_t bytes_per_tile) {
  proto::DeviceProfile device = *LoadDeviceProfile("ipu2");
  device.set_bytes_per_tile(bytes_per_tile);
  return device;
}

std::map<std::string, Plan> ExpectAutoNoWorse(const onnx::ModelProto& model,
                                              Options options) {
  std::map<std::string, Plan> plans;
  for (const char* strategy : {"raw", "search", "optimal", "auto"}) {
    options.strategy = strategy;
    auto plan = PlanModel(model, options);
    if (!plan.ok()) {
      ADD_FAILURE() << strategy << ": " << plan.status();
      return {};
    }
    plans[strategy] = *std::move(plan);
  }
  const Plan& best = plans["auto"];
  for (const char* other : {"raw", "search", "optimal"}) {
    SCOPED_TRACE(other);
    const Plan& plan = plans[other];
    if (plan.proto.fits()) {
      EXPECT_TRUE(best.proto.fits());
      EXPECT_LE(best.proto.performance().bottleneck_s(),
                plan.proto.performance().bottleneck_s() * (1 + 1e-12));
    } else if (!best.proto.fits()) {
      // Note [Splits that do not fit] (solver/strategies/auto_strategy.h):
      // a fullest tile at most the profile's memory band above, and then a
      // bottleneck no larger.
      const int64_t band = MemoryBandBytes(options.device.tiles_per_ipu() == 0
                                               ? *LoadDeviceProfile("ipu2")
                                               : options.device);
      EXPECT_LE(FullestTile(best), FullestTile(plan) + band);
      if (FullestTile(best) > FullestTile(plan)) {
        EXPECT_LE(best.proto.performance().bottleneck_s(),
                  plan.proto.performance().bottleneck_s() * (1 + 1e-12));
      }
    }
  }
  int chosen = 0;
  for (const auto& c : best.proto.candidates()) {
    if (!c.chosen()) continue;
    ++chosen;
    EXPECT_EQ(c.fits(), best.proto.fits());
    EXPECT_DOUBLE_EQ(c.bottleneck_s(), best.proto.performance().bottleneck_s());
  }
  EXPECT_EQ(chosen, 1);
  return plans;
}

}  // namespace autoshard::testing
