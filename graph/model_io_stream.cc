#include "graph/model_io_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/saturating.h"
#include "base/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "graph/model_io.h"
#include "graph/onnx_guard.h"
#include "graph/shapes.h"

namespace autoshard {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

// Field numbers of onnx.proto that the walk looks at.
constexpr int kModelGraph = 7;
constexpr int kGraphInitializer = 5;
constexpr int kTensorRawData = 9;

// As model_io.cc's limit: bodies nest three messages a level.
constexpr int kRecursionLimit = 3 * kMaxGraphNesting + 20;

// Parses `bytes` as `message`, which sits `depth` messages below the
// ModelProto (so a part is refused exactly where the whole would be).
bool ParseWithLimit(absl::string_view bytes,
                    google::protobuf::MessageLite* message, int depth = 0) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                      static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  in.SetRecursionLimit(kRecursionLimit - depth);
  return message->ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

// Walks the fields of one message, bytes [begin, end) of the file.
class FieldWalker {
 public:
  FieldWalker(absl::string_view file, int64_t begin, int64_t end)
      : file_(file),
        base_(begin),
        end_(end),
        in_(reinterpret_cast<const uint8_t*>(file.data()) + begin,
            static_cast<int>(end - begin)) {
    in_.SetTotalBytesLimit(INT_MAX);
  }

  // The next field, or false at the end of the message (error_ says
  // whether it ended well).
  bool Next() {
    start_ = Position();
    if (in_.ExpectAtEnd()) return false;
    tag_ = in_.ReadTag();
    if (tag_ == 0 || (tag_ >> 3) == 0) {
      error_ = "a field tag that is not one";
      return false;
    }
    return true;
  }
  int field() const { return static_cast<int>(tag_ >> 3); }
  bool length_delimited() const {
    return WireFormatLite::GetTagWireType(tag_) ==
           WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
  }
  // For a length-delimited field: its payload [*begin, *end) in the file.
  bool ReadLength(int64_t* begin, int64_t* end) {
    uint32_t length = 0;
    if (!in_.ReadVarint32(&length)) {
      error_ = "a length cut off by the end";
      return false;
    }
    *begin = Position();
    if (length > end_ - *begin) {
      error_ = absl::StrCat("a length prefix of ", length,
                            " bytes past the end (", end_ - *begin, " left)");
      return false;
    }
    in_.Skip(static_cast<int>(length));
    *end = Position();
    return true;
  }
  bool SkipField() {
    if (!WireFormatLite::SkipField(&in_, tag_)) {
      error_ = "a field cut off by the end";
      return false;
    }
    return true;
  }
  // The whole current field, tag included.
  absl::string_view FieldBytes() const {
    return file_.substr(start_, Position() - start_);
  }
  int64_t start() const { return start_; }
  const std::string& error() const { return error_; }
  int64_t Position() const { return base_ + in_.CurrentPosition(); }

 private:
  absl::string_view file_;
  int64_t base_;
  int64_t end_;
  CodedInputStream in_;
  uint32_t tag_ = 0;
  int64_t start_ = 0;
  std::string error_;
};

absl::Status WireError(absl::string_view what, const FieldWalker& w,
                       absl::string_view where) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": not an ONNX model (",
                                                 where, ": ", w.error(),
                                                 " at byte ", w.start(), ")"));
}

// A model-level refusal of a file whose first bytes (up to 64) are all
// printable ASCII or white space gets "; it starts as text: 'hello'" before
// its last ')' (a text file given by mistake, whose wire-format reason
// alone reads as a corrupt model); any other status is returned as it is.
absl::Status WithTextHint(absl::Status status, absl::string_view bytes) {
  if (status.ok() || bytes.empty()) return status;
  const absl::string_view head = bytes.substr(0, 64);
  for (char c : head) {
    const auto u = static_cast<unsigned char>(c);
    if (!(u == '\t' || u == '\n' || u == '\r' || (u >= 0x20 && u < 0x7f)))
      return status;
  }
  std::string shown(head.substr(0, 40));
  for (char& c : shown)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  const absl::string_view message = status.message();
  if (message.empty() || message.back() != ')') return status;
  return absl::InvalidArgumentError(absl::StrCat(
      message.substr(0, message.size() - 1), "; it starts as text: '",
      absl::StripTrailingAsciiWhitespace(shown),
      head.size() > shown.size() ? "...'" : "'", ")"));
}

// Whether `raw_bytes` of raw_data is what t's dims and type hold. Only such
// a tensor is streamed: one that is not stays in memory, so the model guard
// (graph/onnx_guard.h), which skips data left in the file, still refuses it
// with the same message as a load without streaming.
bool RawDataMatchesDims(const onnx::TensorProto& t, int64_t raw_bytes) {
  const int64_t element = ElementSizeBytes(t.data_type());
  if (t.data_type() == onnx::TensorProto::STRING || element <= 0) return false;
  int64_t bytes = element;
  for (int64_t d : t.dims()) {
    if (d < 0) return false;
    bytes = SaturatingMul(bytes, d);
  }
  return bytes == raw_bytes;
}

// One initializer, bytes [begin, end): parsed without a raw_data of
// kStreamMinBytes or more, whose place goes to *streamed (size 0: none).
absl::Status ParseInitializer(absl::string_view file, int64_t begin,
                              int64_t end, absl::string_view what,
                              int64_t min_bytes, onnx::TensorProto* t,
                              StreamedTensor* streamed) {
  FieldWalker w(file, begin, end);
  std::string kept;
  int raw_fields = 0;
  while (w.Next()) {
    if (w.field() == kTensorRawData && w.length_delimited()) {
      ++raw_fields;
      int64_t b = 0, e = 0;
      if (!w.ReadLength(&b, &e)) return WireError(what, w, "an initializer");
      streamed->offset = b;
      streamed->size = e - b;
      if (e - b >= min_bytes) continue;
    } else if (!w.SkipField()) {
      return WireError(what, w, "an initializer");
    }
    absl::StrAppend(&kept, w.FieldBytes());
  }
  if (!w.error().empty()) return WireError(what, w, "an initializer");
  const bool stream = raw_fields == 1 && streamed->size >= min_bytes;
  // A repeated raw_data (protobuf keeps the last) is parsed as it is.
  absl::string_view bytes =
      stream ? absl::string_view(kept) : file.substr(begin, end - begin);
  if (!ParseWithLimit(bytes, t, /*depth=*/2)) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": not an ONNX model (an initializer does not parse at byte ",
        begin, ")"));
  }
  if (!stream || t->data_location() == onnx::TensorProto::EXTERNAL ||
      !RawDataMatchesDims(*t, streamed->size)) {
    if (stream)
      t->set_raw_data(
          std::string(file.substr(streamed->offset, streamed->size)));
    streamed->size = 0;
    return absl::OkStatus();
  }
  // As protobuf reads it: a value outside the enum is an unknown field, not
  // a data_location (found by fuzz_model_stream).
  streamed->had_data_location = t->has_data_location();
  streamed->data_location = t->data_location();
  return absl::OkStatus();
}

// The graph, bytes [begin, end).
absl::Status ParseGraph(absl::string_view file, int64_t begin, int64_t end,
                        absl::string_view what,
                        const std::function<void(int64_t, int64_t)>& progress,
                        int64_t min_bytes, StreamedModel* out) {
  FieldWalker w(file, begin, end);
  std::string kept;
  std::vector<onnx::TensorProto> initializers;
  while (w.Next()) {
    if (w.field() == kGraphInitializer && w.length_delimited()) {
      int64_t b = 0, e = 0;
      if (!w.ReadLength(&b, &e)) return WireError(what, w, "the graph");
      StreamedTensor streamed;
      streamed.initializer = static_cast<int>(initializers.size());
      RETURN_IF_ERROR(ParseInitializer(file, b, e, what, min_bytes,
                                       &initializers.emplace_back(),
                                       &streamed));
      if (streamed.size > 0) out->tensors.push_back(streamed);
      if (progress) progress(e, static_cast<int64_t>(file.size()));
      continue;
    }
    if (!w.SkipField()) return WireError(what, w, "the graph");
    absl::StrAppend(&kept, w.FieldBytes());
  }
  if (!w.error().empty()) return WireError(what, w, "the graph");
  onnx::GraphProto* graph = out->model.mutable_graph();
  if (!ParseWithLimit(kept, graph, /*depth=*/1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": not an ONNX model (the graph does not parse at byte ", begin,
        ")"));
  }
  for (auto& t : initializers) graph->add_initializer()->Swap(&t);
  for (const StreamedTensor& s : out->tensors) {
    graph->mutable_initializer(s.initializer)
        ->set_data_location(onnx::TensorProto::EXTERNAL);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<StreamedModel> ParseModelStreaming(
    absl::string_view bytes, absl::string_view what,
    const std::function<void(int64_t, int64_t)>& progress, int64_t min_bytes) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return ParseModelBytes(bytes, what).status();  // says why
  }
  StreamedModel out;
  FieldWalker w(bytes, 0, static_cast<int64_t>(bytes.size()));
  std::string kept;
  int64_t graph_begin = -1, graph_end = -1, graph_at = -1;
  while (w.Next()) {
    if (w.field() == kModelGraph && w.length_delimited()) {
      if (graph_at >= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": not an ONNX model (a second graph field at byte ",
            w.start(), ", the first at byte ", graph_at,
            "; protobuf would merge the two)"));
      }
      graph_at = w.start();
      if (!w.ReadLength(&graph_begin, &graph_end))
        return WithTextHint(WireError(what, w, "the model"), bytes);
      continue;
    }
    if (!w.SkipField())
      return WithTextHint(WireError(what, w, "the model"), bytes);
    absl::StrAppend(&kept, w.FieldBytes());
  }
  if (!w.error().empty())
    return WithTextHint(WireError(what, w, "the model"), bytes);
  if (!ParseWithLimit(kept, &out.model)) {
    // Today's parser names the reason (too deep, or not a model).
    ASSIGN_OR_RETURN(onnx::ModelProto ignored, ParseModelBytes(bytes, what));
    return WithTextHint(absl::InvalidArgumentError(absl::StrCat(
                            what, ": not an ONNX model (does not parse)")),
                        bytes);
  }
  if (graph_at >= 0) {
    absl::Status s = ParseGraph(bytes, graph_begin, graph_end, what, progress,
                                min_bytes, &out);
    if (!s.ok() && absl::StrContains(s.message(), "does not parse")) {
      ASSIGN_OR_RETURN(onnx::ModelProto ignored, ParseModelBytes(bytes, what));
    }
    RETURN_IF_ERROR(s);
  }
  if (!out.model.has_graph() || out.model.ir_version() <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": not an ONNX model (no ir_version or no graph)"));
  }
  return out;
}

}  // namespace autoshard
