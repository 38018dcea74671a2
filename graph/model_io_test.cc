#include "graph/model_io.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::ReadBytes;
using testing::SharesBytes;
using testing::TempDir;
using testing::WriteBytes;

// A model with one float[4,4] initializer `w` (64 bytes) stored externally
// at `location`, `offset`.
onnx::ModelProto ExternalModel(const std::string& location,
                               int64_t offset = 0) {
  onnx::ModelProto m = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4,4] x) => (float[4,4] y) {
      y = Add(x, w)
    })");
  testing::AddExternalWeight(m.mutable_graph(), "w", location, offset);
  return m;
}

// Adds the external_data entry key = value to `t`.
void AddExternalKey(onnx::TensorProto* t, const std::string& key,
                    const std::string& value) {
  auto* kv = t->add_external_data();
  kv->set_key(key);
  kv->set_value(value);
}

// ExternalModel(location) with one more external_data entry key = value.
onnx::ModelProto WithExternalKey(const std::string& location,
                                 const std::string& key,
                                 const std::string& value) {
  onnx::ModelProto m = ExternalModel(location);
  AddExternalKey(m.mutable_graph()->mutable_initializer(0), key, value);
  return m;
}

absl::Status LoadStatus(const onnx::ModelProto& m, const fs::path& path) {
  WriteBytes(path, m.SerializeAsString());
  return LoadModel(path).status();
}

// Expects each model of `cases`, written at `path`, to fail to load with an
// error that says its text.
void ExpectLoadErrors(
    const fs::path& path,
    const std::vector<std::pair<onnx::ModelProto, std::string>>& cases) {
  for (const auto& [model, text] : cases) {
    EXPECT_THAT(LoadStatus(model, path).message(), HasSubstr(text));
  }
}

TEST(ModelIoTest, MissingFileIsNotFound) {
  auto r = LoadModel("/nonexistent/model.onnx");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/model.onnx"));
}

TEST(ModelIoTest, TextFileAndTruncatedModelAreNotOnnx) {
  TempDir dir;
  WriteBytes(dir.path() / "a.onnx", "this is not a model\n");
  EXPECT_THAT(LoadModel(dir.path() / "a.onnx").status().message(),
              HasSubstr("not an ONNX model"));
  std::string bytes = ExternalModel("w.bin").SerializeAsString();
  WriteBytes(dir.path() / "b.onnx", bytes.substr(0, bytes.size() / 2));
  EXPECT_THAT(LoadModel(dir.path() / "b.onnx").status().message(),
              HasSubstr("not an ONNX model"));
}

TEST(ModelIoTest, ExternalDataInsideTheFolderLoadsWithoutReadingIt) {
  TempDir dir;
  WriteBytes(dir.path() / "w.bin", std::string(64 + 8, '\0'));
  WriteBytes(dir.path() / "m.onnx",
             ExternalModel("w.bin", 8).SerializeAsString());
  auto r = LoadModel(dir.path() / "m.onnx");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->external_files, ::testing::ElementsAre("w.bin"));
}

TEST(ModelIoTest, ExternalDataPatternsOfTheCvesAreRefused) {
  TempDir dir;
  fs::create_directory(dir.path() / "m");
  WriteBytes(dir.path() / "outside.bin", std::string(64, '\0'));
  WriteBytes(dir.path() / "m" / "short.bin", std::string(32, '\0'));
  fs::create_symlink(dir.path() / "outside.bin", dir.path() / "m" / "link.bin");
  ExpectLoadErrors(
      dir.path() / "m" / "m.onnx",
      {{ExternalModel("../outside.bin"), "'..'"},
       {ExternalModel((dir.path() / "outside.bin").string()), "absolute"},
       {ExternalModel("link.bin"), "outside the model's folder"},
       {ExternalModel("missing.bin"), "missing"},
       // 64 bytes needed, the file has 32.
       {ExternalModel("short.bin"), "needs bytes [0, 64)"},
       {WithExternalKey("short.bin", "evil", ""),
        "external data key 'evil' is not one of"}});
}

TEST(ModelIoTest, EveryPlaceATensorCanLiveIsChecked) {
  TempDir dir;
  fs::create_directory(dir.path() / "m");
  const fs::path model = dir.path() / "m" / "m.onnx";
  auto external = [](onnx::TensorProto* t, const std::string& location) {
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(4);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    AddExternalKey(t, "location", location);
  };
  // A sparse initializer's values.
  onnx::ModelProto sparse = ExternalModel("missing.bin");
  sparse.mutable_graph()->clear_initializer();
  auto* sp = sparse.mutable_graph()->add_sparse_initializer();
  sp->mutable_values()->set_name("s");
  external(sp->mutable_values(), "../outside.bin");
  EXPECT_THAT(LoadStatus(sparse, model).message(), HasSubstr("'..'"));
  // A Constant node's sparse_value.
  onnx::ModelProto constant = ExternalModel("missing.bin");
  constant.mutable_graph()->clear_initializer();
  auto* node = constant.mutable_graph()->add_node();
  node->set_op_type("Constant");
  node->add_output("c");
  auto* attr = node->add_attribute();
  attr->set_name("sparse_value");
  attr->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  external(attr->mutable_sparse_tensor()->mutable_values(), "/etc/passwd");
  EXPECT_THAT(LoadStatus(constant, model).message(), HasSubstr("absolute"));
  // A node of a model-local function.
  onnx::ModelProto function = ExternalModel("missing.bin");
  function.mutable_graph()->clear_initializer();
  auto* fnode = function.add_functions()->add_node();
  fnode->set_op_type("Constant");
  auto* fattr = fnode->add_attribute();
  fattr->set_name("value");
  fattr->set_type(onnx::AttributeProto::TENSOR);
  external(fattr->mutable_t(), "../../x.bin");
  EXPECT_THAT(LoadStatus(function, model).message(), HasSubstr("'..'"));
}

TEST(ModelIoTest, ExternalDataSizesAndKeysAreChecked) {
  TempDir dir;
  WriteBytes(dir.path() / "w.bin", std::string(64, '\0'));
  const fs::path model = dir.path() / "m.onnx";
  // dims [2^62, 4] x 4 bytes overflows int64: saturates, so it is too big
  // for the 64-byte file instead of wrapping to 0.
  onnx::ModelProto huge = ExternalModel("w.bin");
  huge.mutable_graph()->mutable_initializer(0)->set_dims(0, int64_t{1} << 62);
  EXPECT_THAT(LoadStatus(huge, model).message(), HasSubstr("needs bytes"));
  onnx::ModelProto negative = ExternalModel("w.bin");
  negative.mutable_graph()->mutable_initializer(0)->set_dims(0, -4);
  EXPECT_THAT(LoadStatus(negative, model).message(),
              HasSubstr("negative dim -4"));
  ExpectLoadErrors(model,
                   {// length 32 < the tensor's 4 x 4 x 4 = 64 bytes.
                    {WithExternalKey("w.bin", "length", "32"),
                     "length 32 is shorter than the tensor's 64 bytes"},
                    {WithExternalKey("w.bin", "location", "w.bin"),
                     "'location' is repeated"},
                    {WithExternalKey("w.bin", "basepath", "/"),
                     "key 'basepath' is not one of"}});
}

// Folders `root`/in and `root`/out; `make_data` makes in/w.bin (64 bytes);
// in/m.onnx, whose weight is in w.bin, is loaded and saved as out/s.onnx.
// The loaded model.
LoadedModel SaveFromInToOut(const fs::path& root,
                            const std::function<void()>& make_data) {
  fs::create_directory(root / "in");
  fs::create_directory(root / "out");
  make_data();
  WriteBytes(root / "in" / "m.onnx",
             ExternalModel("w.bin").SerializeAsString());
  absl::StatusOr<LoadedModel> loaded = LoadModel(root / "in" / "m.onnx");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok()) return LoadedModel();
  EXPECT_TRUE(SaveModel(loaded->model, root / "out" / "s.onnx", root / "in",
                        loaded->external_files)
                  .ok());
  return *std::move(loaded);
}

TEST(ModelIoTest, SymlinkedDataInsideTheFolderIsLinkedAsTheRealFile) {
  TempDir dir;
  SaveFromInToOut(dir.path(), [&] {
    WriteBytes(dir.path() / "in" / "real.bin", std::string(64, '\0'));
    fs::create_symlink("real.bin", dir.path() / "in" / "w.bin");
  });
  EXPECT_FALSE(fs::is_symlink(dir.path() / "out" / "w.bin"));
  EXPECT_TRUE(SharesBytes(dir.path() / "in" / "real.bin",
                          dir.path() / "out" / "w.bin"));
  EXPECT_TRUE(LoadModel(dir.path() / "out" / "s.onnx").ok());
}

TEST(ModelIoTest, SaveElsewhereLinksExternalDataAndNeverCopies) {
  TempDir dir;
  const LoadedModel loaded = SaveFromInToOut(dir.path(), [&] {
    WriteBytes(dir.path() / "in" / "w.bin", std::string(64, '\0'));
  });
  EXPECT_TRUE(
      SharesBytes(dir.path() / "in" / "w.bin", dir.path() / "out" / "w.bin"));
  EXPECT_TRUE(LoadModel(dir.path() / "out" / "s.onnx").ok());
  // A different file already at the data's name is not overwritten.
  fs::create_directory(dir.path() / "out2");
  WriteBytes(dir.path() / "out2" / "w.bin", "other");
  absl::Status s = SaveModel(loaded.model, dir.path() / "out2" / "s.onnx",
                             dir.path() / "in", loaded.external_files);
  EXPECT_THAT(s.message(), HasSubstr("not overwritten"));
  EXPECT_FALSE(fs::exists(dir.path() / "out2" / "s.onnx"));
  // A failed model write removes the links it made: the check before the
  // rename refuses, and out3 is left empty.
  fs::create_directory(dir.path() / "out3");
  s = SaveModel(loaded.model, dir.path() / "out3" / "s.onnx", dir.path() / "in",
                loaded.external_files,
                [](const fs::path&) { return absl::InternalError("refused"); });
  EXPECT_EQ(s.message(), "refused");
  EXPECT_TRUE(fs::is_empty(dir.path() / "out3"));
}

TEST(ModelIoTest, ShareFileClonesOrLinksAndNeverReplaces) {
  TempDir dir;
  WriteBytes(dir.path() / "a.bin", "weights");
  absl::StatusOr<SharedFile> how =
      ShareFile(dir.path() / "a.bin", dir.path() / "b.bin");
  ASSERT_TRUE(how.ok()) << how.status();
  EXPECT_EQ(ReadBytes(dir.path() / "b.bin"), "weights");
  if (*how == SharedFile::kHardLinked) {
    // ext4, tmpfs: one file under two names.
    EXPECT_TRUE(fs::equivalent(dir.path() / "a.bin", dir.path() / "b.bin"));
  } else {
    // btrfs, XFS: an edit of the clone leaves the original.
    WriteBytes(dir.path() / "b.bin", "edited");
    EXPECT_EQ(ReadBytes(dir.path() / "a.bin"), "weights");
  }
  // An existing destination is refused and left as it was.
  WriteBytes(dir.path() / "c.bin", "other");
  EXPECT_FALSE(ShareFile(dir.path() / "a.bin", dir.path() / "c.bin").ok());
  EXPECT_EQ(ReadBytes(dir.path() / "c.bin"), "other");
  // A missing source: an error, nothing made.
  EXPECT_FALSE(ShareFile(dir.path() / "none", dir.path() / "d.bin").ok());
  EXPECT_FALSE(fs::exists(dir.path() / "d.bin"));
}

TEST(ModelIoTest, LongOutputNamesFitTheTemporaryName) {
  TempDir dir;
  const std::string name(250, 'a');  // 255 is the usual limit
  ASSERT_TRUE(WriteFileAtomically(dir.path() / name, "x").ok());
  EXPECT_TRUE(fs::exists(dir.path() / name));
}

TEST(ModelIoTest, FailedWriteLeavesNoFile) {
  TempDir dir;
  absl::Status s =
      WriteFileAtomically(dir.path() / "no_such_folder" / "f.txt", "x");
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(fs::is_empty(dir.path()));
  ASSERT_TRUE(WriteFileAtomically(dir.path() / "f.txt", "hello").ok());
  std::ifstream in(dir.path() / "f.txt");
  std::string text;
  in >> text;
  EXPECT_EQ(text, "hello");
  // Only the file itself: no temporary left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()),
                          fs::directory_iterator()),
            1);
}

}  // namespace
}  // namespace autoshard
