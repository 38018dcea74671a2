// Reading and writing ONNX model files.
//
// Weights stored as external data are never read: only each tensor's dtype,
// dims and location are looked at, and every location is checked to stay
// inside the model's folder (DESIGN.md §5: the patterns of ONNX's
// external-data CVEs). Every file is written to a temporary name in its
// destination folder and then renamed, so no half-written file is ever left.
#ifndef AUTOSHARD_GRAPH_MODEL_IO_H_
#define AUTOSHARD_GRAPH_MODEL_IO_H_

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/model_io_stream.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

struct LoadedModel {
  onnx::ModelProto model;
  std::filesystem::path path;  // the file it was read from
  // External-data files the model refers to, relative to path's folder,
  // sorted and unique.
  std::vector<std::string> external_files;
  // The initializers whose raw_data stayed in `path` (LoadModel with
  // stream_weights; Note [Weights stay in the file]): empty when every byte
  // is in `model`.
  StreamedWeights streamed;
};

// Reads and checks `path`. Errors (each message starts with the path):
// NotFound for a missing file; InvalidArgument for a folder, a file that is
// not an ONNX model (does not parse, or has no graph), and for external data
// that is missing, leaves the model's folder, or is shorter than its
// offset + length or than the tensor's size. With `stream_weights`, large
// inline weights stay in the file (Note [Weights stay in the file]): the
// model reads as if they were external data of unknown values, and
// SaveModel copies them from the file; a file that is not well-formed
// protobuf is refused with the byte where it goes wrong.
// `progress` (streaming only) sees (bytes read, file size).
absl::StatusOr<LoadedModel> LoadModel(
    const std::filesystem::path& path, bool stream_weights = false,
    const std::function<void(int64_t, int64_t)>& progress = nullptr);

// Parses serialized ModelProto bytes. `what` names the source in errors.
absl::StatusOr<onnx::ModelProto> ParseModelBytes(absl::string_view bytes,
                                                 absl::string_view what);

// Checks every external-data reference of `model` (dense and sparse
// initializers, tensor attributes, in the main graph, If/Loop/Scan bodies,
// model-local functions and training_info graphs) against `model_dir`, and
// returns the referenced files (relative, sorted, unique). Reads no data.
absl::StatusOr<std::vector<std::string>> CheckExternalData(
    const onnx::ModelProto& model, const std::filesystem::path& model_dir);

// Called with the temporary file's path before it is renamed into place; an
// error stops the write (nothing is left) and is returned.
using BeforeRename = std::function<absl::Status(const std::filesystem::path&)>;

// Writes `bytes` to `path` through a temporary file in the same folder and a
// rename. On error nothing is left at `path` or at the temporary name.
absl::Status WriteFileAtomically(const std::filesystem::path& path,
                                 absl::string_view bytes,
                                 const BeforeRename& before_rename = nullptr);

// As WriteFileAtomically, the content written by `write` into the open
// temporary file (an error from it stops the write; nothing is left).
absl::Status WriteFileAtomicallyWith(
    const std::filesystem::path& path,
    const std::function<absl::Status(int fd)>& write,
    const BeforeRename& before_rename = nullptr);

// How ShareFile made a second name for a file's bytes.
enum class SharedFile {
  kCloned,      // a copy-on-write clone: an independent file
  kHardLinked,  // a hard link: the same file under two names
};

// Makes `dst` (which must not exist) hold the bytes of the regular file
// `src` without copying them: a copy-on-write clone (Linux ioctl FICLONE,
// offered by btrfs, XFS with reflink, bcachefs, OCFS2) where the file system
// has one, so that a later edit of either leaves the other as it was; else a
// hard link (ext4, tmpfs: the same file). Errors: neither is possible
// (another file system, a permission): the hard link's error, nothing left
// at `dst`.
absl::StatusOr<SharedFile> ShareFile(const std::filesystem::path& src,
                                     const std::filesystem::path& dst);

// Writes `model` to `path` atomically. When the model has external data
// (`external_files`, relative to `source_dir`) and `path` is in another
// folder, each data file is shared into path's folder under the same
// relative name (ShareFile: cloned where the file system can, else
// hard-linked), so the references stay valid; data is never copied (nor
// symlinked: a link leading outside the folder is what LoadModel refuses).
// Errors: a different file already at such a name (it is not overwritten), a
// hard link across file systems. On any error the links this call made are
// removed and nothing is left at `path`. `before_rename` sees the complete file
// in its final folder (so external references resolve), e.g. to run
// CheckModelFile. `streamed`: the weights LoadModel left in the input file,
// copied from it (WriteStreamedModel: the same bytes as if `model` held
// them); `progress` sees the bytes written.
absl::Status SaveModel(const onnx::ModelProto& model,
                       const std::filesystem::path& path,
                       const std::filesystem::path& source_dir,
                       const std::vector<std::string>& external_files,
                       const BeforeRename& before_rename = nullptr,
                       const StreamedWeights& streamed = {},
                       const WriteProgress& progress = nullptr);

// Runs the ONNX checker on the model file at `path` (external data resolved
// beside it; only its existence is checked). A file with inline weights is
// checked without reading them (LoadModel with stream_weights, then
// WithPlaceholderData: the checker reads no raw_data length). Checker
// failures become
// InvalidArgument with the checker's message. Note that ONNX 1.12's checker
// refuses models newer than it knows (IR > 8, opsets > 17; DESIGN.md §8).
absl::Status CheckModelFile(const std::filesystem::path& path);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_MODEL_IO_H_
