#include "tests/test_util.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "onnx/defs/parser.h"

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

}  // namespace autoshard::testing
