// Test helper for the CLI tests: reads a model in ONNX's text syntax
// (onnx/defs/parser.h) on stdin and writes it as a binary model to the path
// given. Nodes without a name are named n0, n1, ... in file order, as
// tests/test_util.h's ParseModelText does (ONNX 1.12's syntax has no node
// names). `--unshaped-output NAME` (repeatable) drops the shape of graph
// output NAME, which the syntax cannot leave out (a bare `float` is a
// scalar), as exporters do. Exit 0, or 2 with the parser's message on
// stderr.
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "onnx/defs/parser.h"
#include "onnx/onnx_pb.h"

int main(int argc, char** argv) {
  std::vector<std::string> unshaped;
  for (int i = 2; i + 1 < argc && std::string(argv[i]) == "--unshaped-output";
       i += 2) {
    unshaped.push_back(argv[i + 1]);
  }
  if (argc != 2 + 2 * static_cast<int>(unshaped.size())) {
    std::cerr
        << "usage: onnx_text_to_model OUT.onnx [--unshaped-output NAME]..."
           " < model.txt\n";
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
  for (const std::string& name : unshaped) {
    bool found = false;
    for (auto& vi : *model.mutable_graph()->mutable_output()) {
      if (vi.name() != name) continue;
      vi.mutable_type()->mutable_tensor_type()->clear_shape();
      found = true;
    }
    if (!found) {
      std::cerr << "onnx_text_to_model: no graph output " << name << "\n";
      return 2;
    }
  }
  std::ofstream out(argv[1], std::ios::binary);
  if (!model.SerializeToOstream(&out)) {
    std::cerr << "onnx_text_to_model: cannot write " << argv[1] << "\n";
    return 2;
  }
  return 0;
}
