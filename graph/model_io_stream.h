// Reading a model file without its weights, and writing it back with them
// copied from file to file (issue 27).
//
// Note [Weights stay in the file]
// A model with inline weights (initializers' raw_data) is mostly weights:
// GPT-2 small is 664 MB, of which the graph's structure is under 1 MB.
// ParseModelStreaming walks the ModelProto wire format (protobuf's
// CodedInputStream over the mapped file) and parses every field into the
// ModelProto except the raw_data of main-graph initializers of at least
// kStreamMinBytes: those it records as a StreamedTensor (where the bytes
// are) and marks the tensor as EXTERNAL data, which every reader of values
// already treats as "values unknown" (ValueFromTensor, CheckConstantValues,
// ONNX's shape inference). kStreamMinBytes is above the largest tensor any
// of them reads (kMaxValueElements int64 values, 32 kB), so no figure
// changes. WriteStreamedModel writes what SerializeToString of the full
// model would write, byte for byte: every field serialized from memory in
// field-number order, except that each streamed raw_data is copied from the
// input file (copy_file_range, so the bytes never enter this process).
#ifndef AUTOSHARD_GRAPH_MODEL_IO_STREAM_H_
#define AUTOSHARD_GRAPH_MODEL_IO_STREAM_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

// raw_data payloads shorter than this stay in memory (bytes).
inline constexpr int64_t kStreamMinBytes = 64 * 1024;

// One main-graph initializer whose raw_data was left in the file.
struct StreamedTensor {
  int initializer = 0;  // index in graph().initializer()
  int64_t offset = 0;   // of the first raw_data byte in the file
  int64_t size = 0;     // raw_data's length in bytes
  // The input's data_location field, restored when writing (the tensor
  // carries EXTERNAL in memory).
  bool had_data_location = false;
  int data_location = 0;
};

// The file a model was read from and the payloads it still holds.
struct StreamedWeights {
  std::filesystem::path file;
  int64_t file_bytes = 0;     // st_size when read
  int64_t file_mtime_ns = 0;  // st_mtim when read
  std::vector<StreamedTensor> tensors;
  bool empty() const { return tensors.empty(); }
};

struct StreamedModel {
  onnx::ModelProto model;
  std::vector<StreamedTensor> tensors;
};

// Parses the serialized ModelProto `bytes` (at most 2 GB) as Note [Weights
// stay in the file] says. `what` names the source in errors. Errors
// (InvalidArgument, "<what>: not an ONNX model (<reason> at byte N)"): a
// field cut off by the end of the file or of its message, a length prefix
// past the end, a wire type protobuf does not have, the graph field twice
// (protobuf would merge the two graphs), a part that does not parse as its
// message (then ParseModelBytes's message, e.g. for nesting too deep).
// `progress` sees (bytes walked, bytes in all) as the graph is read;
// `min_bytes` is the smallest raw_data left in the file (a test or fuzzer
// makes it small).
absl::StatusOr<StreamedModel> ParseModelStreaming(
    absl::string_view bytes, absl::string_view what,
    const std::function<void(int64_t, int64_t)>& progress = nullptr,
    int64_t min_bytes = kStreamMinBytes);

// Puts each streamed tensor's raw_data back into `model` from `weights.file`
// (what a writer that needs the values, the split, calls first) and empties
// `weights`. Errors: the file cannot be read or changed since.
absl::Status ReadStreamedWeights(onnx::ModelProto* model,
                                 StreamedWeights* weights);

// Sets each streamed initializer's data_location in `model` (EXTERNAL
// marks it as streamed; DEFAULT makes it read as an inline tensor whose
// raw_data is empty, e.g. for CheckExternalData).
void MarkStreamed(const StreamedWeights& weights,
                  onnx::TensorProto::DataLocation location,
                  onnx::ModelProto* model);

// The streamed tensors of `part`, a model whose main-graph initializers
// were copied from `source` (a split's stage): those of `weights` (streamed
// from `source`) whose initializer `part` holds under the same name,
// indexed in `part`; file, size and mtime as `weights`'.
StreamedWeights StreamedSubset(const onnx::ModelProto& source,
                               const StreamedWeights& weights,
                               const onnx::ModelProto& part);

// The same model with each streamed tensor as it was in the file except
// for its data: raw_data a zero element of its type, so that ONNX's checker
// sees an inline tensor (ONNX 1.12 does not check raw_data's length).
onnx::ModelProto WithPlaceholderData(
    const onnx::ModelProto& model, const std::vector<StreamedTensor>& tensors);

// Called with (bytes written, bytes in all) as the file is written.
using WriteProgress = std::function<void(int64_t, int64_t)>;

// Writes to the open file `fd` what model.SerializeToString() would with
// every streamed raw_data in place, copying those from `weights.file`.
// `what` names the output in errors ("<what>: write failed at byte N:
// <reason>"). Errors: the input changed since it was read (size or mtime),
// a write error (full disk: "File too large"/"No space left on device").
absl::Status WriteStreamedModel(const onnx::ModelProto& model,
                                const StreamedWeights& weights, int fd,
                                absl::string_view what,
                                const WriteProgress& progress = nullptr);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_MODEL_IO_STREAM_H_
