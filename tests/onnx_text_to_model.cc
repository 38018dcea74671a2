// Test helper for the CLI tests: reads a model in ONNX's text syntax
// (onnx/defs/parser.h) on stdin and writes it as a binary model to the path
// given. Nodes without a name are named n0, n1, ... in file order, as
// tests/test_util.h's ParseModelText does (ONNX 1.12's syntax has no node
// names). `--unshaped-output NAME` (repeatable) drops the shape of graph
// output NAME, which the syntax cannot leave out (a bare `float` is a
// scalar), as exporters do. `--external NAME=FILE` (repeatable) moves
// initializer NAME's data into FILE beside the output (offset 0), as
// external data. Exit 0, or 2 with the parser's message on stderr.
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "onnx/defs/parser.h"
#include "onnx/onnx_pb.h"

int main(int argc, char** argv) {
  std::vector<std::string> unshaped;
  std::vector<std::pair<std::string, std::string>> external;
  int i = 2;
  for (; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--unshaped-output") {
      unshaped.push_back(value);
    } else if (flag == "--external" && value.find('=') != std::string::npos) {
      external.emplace_back(value.substr(0, value.find('=')),
                            value.substr(value.find('=') + 1));
    } else {
      break;
    }
  }
  if (argc < 2 || i != argc) {
    std::cerr << "usage: onnx_text_to_model OUT.onnx [--unshaped-output NAME]"
                 "... [--external NAME=FILE]... < model.txt\n";
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
  const std::string out_path = argv[1];
  const std::string dir = out_path.find('/') == std::string::npos
                              ? "."
                              : out_path.substr(0, out_path.rfind('/'));
  for (const auto& [name, file] : external) {
    bool found = false;
    for (auto& t : *model.mutable_graph()->mutable_initializer()) {
      if (t.name() != name) continue;
      std::string bytes = t.raw_data();
      if (bytes.empty()) {  // the parser keeps floats in float_data
        for (float f : t.float_data())
          bytes.append(reinterpret_cast<const char*>(&f), sizeof f);
      }
      std::ofstream(dir + "/" + file, std::ios::binary) << bytes;
      t.clear_raw_data();
      t.clear_float_data();
      t.set_data_location(onnx::TensorProto::EXTERNAL);
      auto* kv = t.add_external_data();
      kv->set_key("location");
      kv->set_value(file);
      found = true;
    }
    if (!found) {
      std::cerr << "onnx_text_to_model: no initializer " << name << "\n";
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
