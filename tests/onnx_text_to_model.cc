// Test helper for the CLI tests: reads a model in ONNX's text syntax
// (onnx/defs/parser.h) on stdin and writes it as a binary model to the path
// given. Nodes without a name are named n0, n1, ... in file order, as
// tests/test_util.h's ParseModelText does (ONNX 1.12's syntax has no node
// names). Exit 0, or 2 with the parser's message on stderr.
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "onnx/defs/parser.h"
#include "onnx/onnx_pb.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: onnx_text_to_model OUT.onnx < model.txt\n";
    return 2;
  }
  const std::string text((std::istreambuf_iterator<char>(std::cin)),
                         std::istreambuf_iterator<char>());
  onnx::ModelProto model;
  const onnx::Status status = onnx::OnnxParser::Parse(model, text.c_str());
  if (!status.IsOK()) {
    std::cerr << "onnx_text_to_model: " << status.ErrorMessage() << "\n";
    return 2;
  }
  for (int i = 0; i < model.graph().node_size(); ++i) {
    onnx::NodeProto* node = model.mutable_graph()->mutable_node(i);
    if (node->name().empty()) node->set_name("n" + std::to_string(i));
  }
  std::ofstream out(argv[1], std::ios::binary);
  if (!model.SerializeToOstream(&out)) {
    std::cerr << "onnx_text_to_model: cannot write " << argv[1] << "\n";
    return 2;
  }
  return 0;
}
