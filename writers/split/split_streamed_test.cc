// The per-stage models of a model whose weights stayed in its file
// (SplitStreamed, issue 27 point 2): the same bytes as a split of the model
// read whole, without the weights entering memory.
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/annotations.h"
#include "graph/model_io.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"
#include "writers/split/split.h"

namespace autoshard {
namespace {

namespace fs = std::filesystem;
using testing::ReadBytes;
using testing::TempDir;
using testing::WriteBytes;

// x[1,128] -> MatMul w0[128,128] -> MatMul w1[128,128] -> Add b[128], node i
// on stage stages[i]. w0 and w1 are 128 x 128 x 4 = 65,536 B inline
// (kStreamMinBytes: streamed), b 512 B (kept in memory); each weight's
// bytes are distinct (byte k of w_i is (k + 7 i) mod 251) so that a weight
// copied from the wrong place shows.
void WriteInlineModel(const fs::path& path, const std::vector<int>& stages) {
  onnx::ModelProto m = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,128] x) => (float[1,128] y) {
      a = MatMul(x, w0)
      c = MatMul(a, w1)
      y = Add(c, b)
    })");
  for (int i = 0; i < m.graph().node_size(); ++i) {
    SetPlacement(stages[i], stages[i], m.mutable_graph()->mutable_node(i));
  }
  const std::vector<std::pair<std::string, int>> weights = {
      {"w0", 128 * 128}, {"w1", 128 * 128}, {"b", 128}};
  for (size_t i = 0; i < weights.size(); ++i) {
    onnx::TensorProto* t = m.mutable_graph()->add_initializer();
    t->set_name(weights[i].first);
    t->set_data_type(onnx::TensorProto::FLOAT);
    if (weights[i].second > 128) t->add_dims(128);
    t->add_dims(128);
    std::string raw(static_cast<size_t>(weights[i].second) * 4, '\0');
    for (size_t k = 0; k < raw.size(); ++k) {
      raw[k] = static_cast<char>((k + 7 * i) % 251);
    }
    t->set_raw_data(raw);
  }
  WriteBytes(path, m.SerializeAsString());
}

TEST(SplitStreamedTest, StagesCopyTheirWeightsFromTheFileByteForByte) {
  TempDir tmp;
  const fs::path model = tmp.path() / "m.onnx";
  WriteInlineModel(model, {0, 1, 1});
  std::vector<std::string> written[2];
  for (bool stream : {false, true}) {
    absl::StatusOr<LoadedModel> loaded = LoadModel(model, stream);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    // Streaming leaves w0 and w1 in the file (2 tensors), b in memory.
    EXPECT_EQ(loaded->streamed.tensors.size(), stream ? 2u : 0u);
    absl::StatusOr<Split> split = SplitStreamed(
        &loaded->model, loaded->streamed,
        [&](const onnx::ModelProto& m) { return SplitModel(m, tmp.path()); });
    ASSERT_TRUE(split.ok()) << split.status();
    ASSERT_EQ(split->stages.size(), 2u);
    if (stream) {
      // Stage 0 reads w0 only; stage 1 w1 (and b, in memory), each indexed
      // in its own stage model.
      ASSERT_EQ(split->stages[0].streamed.tensors.size(), 1u);
      ASSERT_EQ(split->stages[1].streamed.tensors.size(), 1u);
      const auto& t = split->stages[1].streamed.tensors[0];
      EXPECT_EQ(
          split->stages[1].model.graph().initializer(t.initializer).name(),
          "w1");
      EXPECT_EQ(t.size, 65536);
      // The loaded model's marks are back: its weights still read as
      // streamed (EXTERNAL) for whatever runs next.
      for (const StreamedTensor& s : loaded->streamed.tensors) {
        EXPECT_EQ(
            loaded->model.graph().initializer(s.initializer).data_location(),
            onnx::TensorProto::EXTERNAL);
      }
    }
    const fs::path dir = tmp.path() / (stream ? "streamed" : "whole");
    std::vector<std::string> warnings;
    absl::Status s = WriteSplit(*split, dir, tmp.path(), model, &warnings);
    ASSERT_TRUE(s.ok()) << s;
    for (const char* f : {"stage_0.onnx", "stage_1.onnx", "manifest.json"}) {
      written[stream].push_back(ReadBytes(dir / f));
    }
  }
  EXPECT_EQ(written[0], written[1]);
  // And the weights are the input's: stage 1 holds w1's 65,536 B.
  onnx::ModelProto stage1;
  ASSERT_TRUE(stage1.ParseFromString(written[1][1]));
  bool found = false;
  for (const auto& t : stage1.graph().initializer()) {
    if (t.name() != "w1") continue;
    found = true;
    ASSERT_EQ(t.raw_data().size(), 65536u);
    EXPECT_EQ(t.raw_data()[0], static_cast<char>(7));  // (0 + 7) mod 251
    EXPECT_EQ(t.raw_data()[300], static_cast<char>(307 % 251));
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace autoshard
