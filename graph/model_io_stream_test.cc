#include "graph/model_io_stream.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "graph/model_io.h"
#include "graph/onnx_guard.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::ReadBytes;
using testing::TempDir;
using testing::WriteBytes;

// y = MatMul(x, w) + b: w float[128,256] (131072 bytes of raw_data, over
// kStreamMinBytes: streamed), b float[256] (1024 bytes: kept in memory,
// with data_location DEFAULT written out), a doc string after the graph's
// initializers and metadata after the graph.
onnx::ModelProto TwoWeights() {
  onnx::ModelProto m = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,128] x) => (float[1,256] y) {
      t = MatMul(x, w)
      y = Add(t, b)
    })");
  onnx::GraphProto* g = m.mutable_graph();
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(128);
  w->add_dims(256);
  std::string raw(128 * 256 * 4, 0);
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<char>(i * 7);
  w->set_raw_data(raw);
  w->set_doc_string("after raw_data");
  onnx::TensorProto* b = g->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(256);
  b->set_raw_data(std::string(1024, 1));
  b->set_data_location(onnx::TensorProto::DEFAULT);
  g->set_doc_string("graph doc");
  auto* kv = m.add_metadata_props();
  kv->set_key("k");
  kv->set_value("v");
  return m;
}

TEST(ModelIoStreamTest, LoadLeavesLargeWeightsInTheFile) {
  TempDir dir;
  const onnx::ModelProto m = TwoWeights();
  const std::string bytes = m.SerializeAsString();
  WriteBytes(dir.path() / "m.onnx", bytes);
  auto loaded = LoadModel(dir.path() / "m.onnx", /*stream_weights=*/true);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->streamed.tensors.size(), 1u);
  const StreamedTensor& s = loaded->streamed.tensors[0];
  EXPECT_EQ(s.initializer, 0);
  EXPECT_EQ(s.size, 131072);
  EXPECT_FALSE(s.had_data_location);
  // The recorded bytes are w's data.
  EXPECT_EQ(bytes.substr(s.offset, s.size),
            m.graph().initializer(0).raw_data());
  const onnx::TensorProto& w = loaded->model.graph().initializer(0);
  EXPECT_EQ(w.data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_FALSE(w.has_raw_data());
  EXPECT_EQ(w.doc_string(), "after raw_data");
  // b stays as it was: 1024 bytes are below kStreamMinBytes.
  EXPECT_EQ(loaded->model.graph().initializer(1).raw_data().size(), 1024u);
  EXPECT_EQ(loaded->model.metadata_props(0).value(), "v");
  // ReadStreamedWeights gives back the model as today's LoadModel reads it.
  ASSERT_TRUE(ReadStreamedWeights(&loaded->model, &loaded->streamed).ok());
  EXPECT_EQ(loaded->model.SerializeAsString(), bytes);
}

// The written file is what SerializeToString of the whole annotated model
// gives, byte for byte, though w's 131072 bytes never were in memory.
TEST(ModelIoStreamTest, SaveIsByteIdenticalToTheWholeModelsBytes) {
  TempDir dir;
  onnx::ModelProto m = TwoWeights();
  WriteBytes(dir.path() / "m.onnx", m.SerializeAsString());
  auto loaded = LoadModel(dir.path() / "m.onnx", true);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  for (onnx::ModelProto* model : {&m, &loaded->model}) {
    auto* a = model->mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name("__ipu_number");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(1);
  }
  int64_t last_done = 0, last_total = 0;
  ASSERT_TRUE(SaveModel(loaded->model, dir.path() / "out.onnx", dir.path(), {},
                        nullptr, loaded->streamed,
                        [&](int64_t done, int64_t total) {
                          last_done = done;
                          last_total = total;
                        })
                  .ok());
  const std::string want = m.SerializeAsString();
  EXPECT_EQ(ReadBytes(dir.path() / "out.onnx"), want);
  EXPECT_EQ(last_done, static_cast<int64_t>(want.size()));
  EXPECT_EQ(last_total, static_cast<int64_t>(want.size()));
  EXPECT_TRUE(CheckModelFile(dir.path() / "out.onnx").ok());
}

// A data_location outside the enum is an unknown field to protobuf, not a
// data_location: written back as it came (found by fuzz_model_stream).
TEST(ModelIoStreamTest, AnUnknownDataLocationValueStaysUnknown) {
  TempDir dir;
  onnx::ModelProto m = TwoWeights();
  onnx::TensorProto* w = m.mutable_graph()->mutable_initializer(0);
  w->GetReflection()->MutableUnknownFields(w)->AddVarint(14, 31);
  WriteBytes(dir.path() / "m.onnx", m.SerializeAsString());
  auto loaded = LoadModel(dir.path() / "m.onnx", true);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->streamed.tensors.size(), 1u);
  EXPECT_FALSE(loaded->streamed.tensors[0].had_data_location);
  ASSERT_TRUE(SaveModel(loaded->model, dir.path() / "out.onnx", dir.path(), {},
                        nullptr, loaded->streamed)
                  .ok());
  EXPECT_EQ(ReadBytes(dir.path() / "out.onnx"), m.SerializeAsString());
}

// A model changed on disk between reading and writing is not written from.
TEST(ModelIoStreamTest, AChangedInputIsRefused) {
  TempDir dir;
  WriteBytes(dir.path() / "m.onnx", TwoWeights().SerializeAsString());
  auto loaded = LoadModel(dir.path() / "m.onnx", true);
  ASSERT_TRUE(loaded.ok());
  WriteBytes(dir.path() / "m.onnx", "shorter");
  absl::Status s = SaveModel(loaded->model, dir.path() / "out.onnx", dir.path(),
                             {}, nullptr, loaded->streamed);
  EXPECT_THAT(s.message(), HasSubstr("changed since it was read"));
  EXPECT_FALSE(fs::exists(dir.path() / "out.onnx"));
  // Nothing else left in the folder: the input alone.
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir.path()))
    left.push_back(e.path().filename().string());
  EXPECT_THAT(left, ::testing::ElementsAre("m.onnx"));
}

// A raw_data whose length is not what the dims and type hold is not
// streamed: it stays in memory, so the model guard judges it as it does a
// model loaded whole (found by review: streamed, it was marked EXTERNAL, the
// guard skipped it, and the Reshape got an unknown shape instead of the
// refusal).
TEST(ModelIoStreamTest, AWeightWhoseBytesContradictItsDimsIsNotStreamed) {
  TempDir dir;
  onnx::ModelProto m = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4,4] x) => (float[2,8] y) {
      y = Reshape(x, s)
    })");
  // s claims dims [2] (2 int64 values, 16 bytes) but holds 65536 bytes:
  // over kStreamMinBytes.
  onnx::TensorProto* s = m.mutable_graph()->add_initializer();
  s->set_name("s");
  s->set_data_type(onnx::TensorProto::INT64);
  s->add_dims(2);
  s->set_raw_data(std::string(65536, 0));
  WriteBytes(dir.path() / "m.onnx", m.SerializeAsString());
  auto streamed = LoadModel(dir.path() / "m.onnx", /*stream_weights=*/true);
  auto whole = LoadModel(dir.path() / "m.onnx", /*stream_weights=*/false);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_TRUE(streamed->streamed.tensors.empty());
  const onnx::TensorProto& kept = streamed->model.graph().initializer(0);
  EXPECT_NE(kept.data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(kept.raw_data().size(), 65536u);
  const absl::Status a = CheckModelForOnnx(streamed->model);
  const absl::Status b = CheckModelForOnnx(whole->model);
  EXPECT_THAT(b.message(), HasSubstr("stores 8192 values"));
  EXPECT_EQ(a, b);
}

// Expects `bytes` as a model file to be refused naming the file, `reason`
// and the byte `at`.
void ExpectRefused(const std::string& bytes, const std::string& reason,
                   int64_t at) {
  TempDir dir;
  const fs::path p = dir.path() / "bad.onnx";
  WriteBytes(p, bytes);
  auto loaded = LoadModel(p, true);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr(p.string() + ": "));
  EXPECT_THAT(loaded.status().message(), HasSubstr(reason));
  EXPECT_THAT(loaded.status().message(),
              HasSubstr(absl::StrCat("at byte ", at)));
}

TEST(ModelIoStreamTest, BadWireFormatIsRefusedWithTheByte) {
  const std::string good = TwoWeights().SerializeAsString();
  // ir_version is field 1 (2 bytes: tag 0x08, 8); the graph's tag follows
  // at byte 2 (0x3A), then its length as a 3-byte varint, payload at 5.
  ASSERT_EQ(good[2], '\x3A');
  // Cut inside w's raw_data: the graph's length prefix passes the end.
  ExpectRefused(good.substr(0, 70000), "past the end", 2);
  // A file that ends inside the ir_version field.
  ExpectRefused(good.substr(0, 1), "cut off by the end", 0);
  // A second graph field: protobuf would merge the two.
  const std::string graph_field = good.substr(
      2, good.size() - 2 - (TwoWeights().metadata_props(0).ByteSizeLong() + 2));
  ExpectRefused(good + graph_field, "a second graph field", good.size());
}

// A text file given by mistake: the refusal says it starts as text.
TEST(ModelIoStreamTest, ATextFileIsSaidToBeText) {
  ExpectRefused("hello world\n", "; it starts as text: 'hello world')", 2);
  // 64 printable bytes or more: the first 40 shown, then "...".
  // ('a' is 0x61: field 12, wire type 1, 8 bytes; the eighth field of
  // them is cut off at byte 63.)
  ExpectRefused(std::string(70, 'a'),
                absl::StrCat("starts as text: '", std::string(40, 'a'), "...'"),
                63);
  // Binary bytes: no such hint.
  TempDir dir;
  const fs::path p = dir.path() / "bin.onnx";
  WriteBytes(p, std::string("\x08\x08\x3a\xff\xff", 5));
  auto loaded = LoadModel(p, true);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), ::testing::Not(HasSubstr("as text")));
}

// An initializer whose raw_data length goes past the initializer's own end
// (its data is out of the file's bounds as the tensor says them).
TEST(ModelIoStreamTest, InitializerDataPastItsMessageIsRefused) {
  // graph { initializer { name: "w" raw_data: <length 1000, 3 bytes> } }
  std::string tensor = "\x42\x01w";  // name (8): "w"
  tensor +=
      "\x4A\xE8\x07"
      "abc";  // raw_data (9): length 1000
  std::string graph =
      "\x2A" + std::string(1, static_cast<char>(tensor.size())) + tensor;
  std::string model = std::string("\x08\x08", 2) + "\x3A" +
                      std::string(1, static_cast<char>(graph.size())) + graph;
  // The initializer starts at byte 6, its raw_data's tag at byte 9.
  ExpectRefused(model, "a length prefix of 1000 bytes past the end (3 left)",
                9);
}

}  // namespace
}  // namespace autoshard
