// Shared by the fuzz targets: a small model from ONNX text, parsed once.
#ifndef AUTOSHARD_FUZZ_FUZZ_UTIL_H_
#define AUTOSHARD_FUZZ_FUZZ_UTIL_H_

#include <string>

#include "onnx/defs/parser.h"
#include "onnx/onnx_pb.h"

namespace autoshard::fuzz {

// `text` (ONNX's text syntax) parsed, its nodes named n0, n1, ... (as
// tests/test_util.h names them). Aborts on text that does not parse: the
// targets' own models are fixed.
inline onnx::ModelProto NamedModel(const char* text) {
  onnx::ModelProto m;
  if (!onnx::OnnxParser::Parse(m, text).IsOK()) __builtin_trap();
  for (int i = 0; i < m.graph().node_size(); ++i)
    m.mutable_graph()->mutable_node(i)->set_name("n" + std::to_string(i));
  return m;
}

}  // namespace autoshard::fuzz

#endif  // AUTOSHARD_FUZZ_FUZZ_UTIL_H_
