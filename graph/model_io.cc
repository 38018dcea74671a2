#include "graph/model_io.h"

#include <fcntl.h>
#include <linux/fs.h>  // FICLONE
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <fstream>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "graph/onnx_guard.h"
#include "graph/shapes.h"
#include "onnx/checker.h"
// Last: it defines MAP_TYPE, a name in ONNX's defs/parser.h.
#include <sys/mman.h>

namespace autoshard {
namespace fs = std::filesystem;
namespace {

absl::Status PathError(const fs::path& path, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(path.string(), ": ", reason));
}

// True when `inner` (canonical) is `dir` (canonical) or below it.
// Whether the regular files `a` and `b` hold the same bytes (read in 1 MB
// blocks; false when either cannot be read).
bool SameBytes(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  const auto size = fs::file_size(a, ec);
  if (ec || fs::file_size(b, ec) != size || ec) return false;
  std::ifstream in_a(a, std::ios::binary), in_b(b, std::ios::binary);
  std::string block_a(1 << 20, '\0'), block_b(1 << 20, '\0');
  while (in_a && in_b) {
    in_a.read(block_a.data(), static_cast<std::streamsize>(block_a.size()));
    in_b.read(block_b.data(), static_cast<std::streamsize>(block_b.size()));
    if (in_a.gcount() != in_b.gcount() ||
        block_a.compare(0, in_a.gcount(), block_b, 0, in_b.gcount()) != 0) {
      return false;
    }
  }
  return in_a.eof() && in_b.eof();
}

bool IsInside(const fs::path& inner, const fs::path& dir) {
  auto [d, i] =
      std::mismatch(dir.begin(), dir.end(), inner.begin(), inner.end());
  return d == dir.end();
}

struct ExternalRef {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;  // -1: not given
};

absl::StatusOr<ExternalRef> ParseExternalRef(const onnx::TensorProto& t) {
  ExternalRef ref;
  std::set<std::string> seen;
  for (const auto& kv : t.external_data()) {
    // The keys of the ONNX spec (external_data.md), each at most once.
    if (kv.key() != "location" && kv.key() != "offset" &&
        kv.key() != "length" && kv.key() != "checksum") {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", t.name(), "': external data key '", kv.key(),
                       "' is not one of location, offset, length, checksum"));
    }
    if (!seen.insert(kv.key()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", t.name(), "': external data key '", kv.key(),
                       "' is repeated"));
    }
    if (kv.key() == "location") {
      ref.location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      int64_t v = 0;
      if (!absl::SimpleAtoi(kv.value(), &v) || v < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor '", t.name(), "': external data ", kv.key(),
                         " '", kv.value(), "' is not a non-negative integer"));
      }
      (kv.key() == "offset" ? ref.offset : ref.length) = v;
    }
  }
  if (ref.location.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", t.name(), "': external data has no location"));
  }
  return ref;
}

// Checks one tensor's reference; adds its file to `files`.
absl::Status CheckTensor(const onnx::TensorProto& t, const fs::path& dir,
                         const fs::path& canonical_dir,
                         std::set<std::string>* files) {
  if (t.data_location() != onnx::TensorProto::EXTERNAL) return absl::OkStatus();
  ASSIGN_OR_RETURN(ExternalRef ref, ParseExternalRef(t));
  fs::path loc(ref.location);
  if (loc.is_absolute() || loc.has_root_name() || loc.has_root_directory()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", t.name(), "': external data location '", ref.location,
        "' is absolute; it must be relative to the model's folder"));
  }
  for (const auto& part : loc) {
    if (part == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", t.name(), "': external data location '",
                       ref.location, "' has a '..' component"));
    }
  }
  std::error_code ec;
  fs::path full = dir / loc;
  fs::path canonical = fs::canonical(full, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", t.name(), "': external data file '",
                     full.string(), "' is missing"));
  }
  if (!IsInside(canonical, canonical_dir)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", t.name(), "': external data location '", ref.location,
        "' leads outside the model's folder (through a symlink)"));
  }
  if (!fs::is_regular_file(canonical, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", t.name(), "': external data '", full.string(),
                     "' is not a regular file"));
  }
  const int64_t file_size = static_cast<int64_t>(fs::file_size(canonical, ec));
  int64_t size = ElementSizeBytes(t.data_type());
  for (int64_t d : t.dims()) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", t.name(), "' has a negative dim ", d));
    }
    size = SaturatingMul(size, d);
  }
  if (ref.length >= 0 && ref.length < size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", t.name(), "': external data length ", ref.length,
        " is shorter than the tensor's ", size, " bytes"));
  }
  const int64_t need = ref.length >= 0 ? ref.length : size;
  if (ref.offset > file_size || need > file_size - ref.offset) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", t.name(), "': external data needs bytes [",
                     ref.offset, ", ", ref.offset + need, ") of '",
                     full.string(), "', which has ", file_size));
  }
  files->insert(loc.lexically_normal().string());
  return absl::OkStatus();
}

absl::Status CheckSparse(const onnx::SparseTensorProto& t, const fs::path& dir,
                         const fs::path& canonical_dir,
                         std::set<std::string>* files) {
  RETURN_IF_ERROR(CheckTensor(t.values(), dir, canonical_dir, files));
  return CheckTensor(t.indices(), dir, canonical_dir, files);
}

// Every tensor a graph holds: initializers (dense and sparse), node attributes
// (tensor and sparse tensor values) and, recursively, bodies.
absl::Status CheckNodes(
    const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
    const fs::path& dir, const fs::path& canonical_dir,
    std::set<std::string>* files);

absl::Status CheckGraph(const onnx::GraphProto& g, const fs::path& dir,
                        const fs::path& canonical_dir,
                        std::set<std::string>* files) {
  for (const auto& t : g.initializer()) {
    RETURN_IF_ERROR(CheckTensor(t, dir, canonical_dir, files));
  }
  for (const auto& t : g.sparse_initializer()) {
    RETURN_IF_ERROR(CheckSparse(t, dir, canonical_dir, files));
  }
  return CheckNodes(g.node(), dir, canonical_dir, files);
}

absl::Status CheckNodes(
    const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
    const fs::path& dir, const fs::path& canonical_dir,
    std::set<std::string>* files) {
  for (const auto& node : nodes) {
    for (const auto& attr : node.attribute()) {
      if (attr.has_t())
        RETURN_IF_ERROR(CheckTensor(attr.t(), dir, canonical_dir, files));
      for (const auto& t : attr.tensors()) {
        RETURN_IF_ERROR(CheckTensor(t, dir, canonical_dir, files));
      }
      if (attr.has_sparse_tensor()) {
        RETURN_IF_ERROR(
            CheckSparse(attr.sparse_tensor(), dir, canonical_dir, files));
      }
      for (const auto& t : attr.sparse_tensors()) {
        RETURN_IF_ERROR(CheckSparse(t, dir, canonical_dir, files));
      }
      if (attr.has_g())
        RETURN_IF_ERROR(CheckGraph(attr.g(), dir, canonical_dir, files));
      for (const auto& sub : attr.graphs()) {
        RETURN_IF_ERROR(CheckGraph(sub, dir, canonical_dir, files));
      }
    }
  }
  return absl::OkStatus();
}

// Protobuf's recursion limit (default 100: an If nested 33 deep) raised to
// what kMaxGraphNesting bodies need: each body is three messages deeper
// (NodeProto, AttributeProto, GraphProto), plus slack for nested types.
constexpr int kProtoRecursionLimit = 3 * kMaxGraphNesting + 20;
// Only to tell a model nested too deep from garbage; protobuf's parser
// recurses, so this stays far below what a thread's stack holds.
constexpr int kProtoDiagnosisLimit = 3000;

bool ParseWithDepth(absl::string_view bytes, int limit,
                    onnx::ModelProto* model) {
  google::protobuf::io::CodedInputStream input(
      reinterpret_cast<const uint8_t*>(bytes.data()),
      static_cast<int>(bytes.size()));
  input.SetTotalBytesLimit(INT_MAX);
  input.SetRecursionLimit(limit);
  return model->ParseFromCodedStream(&input) && input.ConsumedEntireMessage();
}

}  // namespace

absl::StatusOr<onnx::ModelProto> ParseModelBytes(absl::string_view bytes,
                                                 absl::string_view what) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError(absl::StrCat(
        what,
        ": larger than 2 GB: protobuf cannot parse it; save the weights "
        "as external data"));
  }
  onnx::ModelProto model;
  if (!ParseWithDepth(bytes, kProtoRecursionLimit, &model)) {
    onnx::ModelProto deeper;
    if (ParseWithDepth(bytes, kProtoDiagnosisLimit, &deeper)) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": nests deeper than autoshard reads (", kMaxGraphNesting,
          " levels of If/Loop/Scan bodies, protobuf recursion limit ",
          kProtoRecursionLimit, ")"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        what,
        ": not an ONNX model (the protobuf does not parse; truncated or "
        "another format?)"));
  }
  if (!model.has_graph() || model.ir_version() <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": not an ONNX model (no ir_version or no graph)"));
  }
  return model;
}

namespace {

// The model at `path` (a regular file), its large inline weights left in
// the file (Note [Weights stay in the file]).
absl::StatusOr<LoadedModel> LoadStreaming(
    const fs::path& path,
    const std::function<void(int64_t, int64_t)>& progress) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return PathError(path, absl::StrCat("cannot open: ", std::strerror(errno)));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return PathError(path, "cannot stat");
  }
  LoadedModel loaded;
  loaded.path = path;
  loaded.streamed.file = path;
  loaded.streamed.file_bytes = st.st_size;
  loaded.streamed.file_mtime_ns =
      st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
  if (st.st_size > INT_MAX) {
    ::close(fd);
    return PathError(path,
                     "larger than 2 GB: protobuf cannot parse it; save the "
                     "weights as external data");
  }
  void* map = st.st_size == 0
                  ? nullptr
                  : ::mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED)
    return PathError(path, absl::StrCat("cannot map: ", std::strerror(errno)));
  // Only the structure's pages are read (Note [Weights stay in the file]).
  if (map != nullptr) ::madvise(map, st.st_size, MADV_RANDOM);
  absl::StatusOr<StreamedModel> parsed = ParseModelStreaming(
      absl::string_view(static_cast<const char*>(map), st.st_size),
      path.string(), progress);
  if (map != nullptr) ::munmap(map, st.st_size);
  if (!parsed.ok()) return parsed.status();
  loaded.model = std::move(parsed->model);
  loaded.streamed.tensors = std::move(parsed->tensors);
  return loaded;
}

}  // namespace

absl::StatusOr<LoadedModel> LoadModel(
    const fs::path& path, bool stream_weights,
    const std::function<void(int64_t, int64_t)>& progress) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return absl::NotFoundError(absl::StrCat(path.string(), ": no such file"));
  }
  if (!fs::is_regular_file(path, ec))
    return PathError(path, "not a regular file");
  fs::path dir =
      path.parent_path().empty() ? fs::path(".") : path.parent_path();
  if (stream_weights) {
    ASSIGN_OR_RETURN(LoadedModel loaded, LoadStreaming(path, progress));
    // Streamed tensors are inline data, not references to check.
    MarkStreamed(loaded.streamed, onnx::TensorProto::DEFAULT, &loaded.model);
    auto files = CheckExternalData(loaded.model, dir);
    MarkStreamed(loaded.streamed, onnx::TensorProto::EXTERNAL, &loaded.model);
    if (!files.ok()) return PathError(path, files.status().message());
    loaded.external_files = *std::move(files);
    return loaded;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return PathError(path, absl::StrCat("cannot open: ", std::strerror(errno)));
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  if (in.bad()) return PathError(path, "read error");
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return PathError(path,
                     "larger than 2 GB: protobuf cannot parse it; save the "
                     "weights as external data");
  }
  LoadedModel loaded;
  loaded.path = path;
  absl::StatusOr<onnx::ModelProto> parsed =
      ParseModelBytes(bytes, path.string());
  if (!parsed.ok()) {
    // The streaming reader's reason names the byte; the same message as
    // with stream_weights.
    absl::StatusOr<StreamedModel> walked =
        ParseModelStreaming(bytes, path.string());
    return walked.ok() ? parsed.status() : walked.status();
  }
  loaded.model = *std::move(parsed);
  auto files = CheckExternalData(loaded.model, dir);
  if (!files.ok()) return PathError(path, files.status().message());
  loaded.external_files = *std::move(files);
  return loaded;
}

absl::StatusOr<std::vector<std::string>> CheckExternalData(
    const onnx::ModelProto& model, const fs::path& model_dir) {
  std::error_code ec;
  fs::path canonical_dir = fs::canonical(model_dir, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resolve folder '", model_dir.string(), "'"));
  }
  std::set<std::string> files;
  RETURN_IF_ERROR(CheckGraph(model.graph(), model_dir, canonical_dir, &files));
  for (const auto& f : model.functions()) {
    RETURN_IF_ERROR(CheckNodes(f.node(), model_dir, canonical_dir, &files));
  }
  // Training graphs hold tensors too (initialization's outputs, algorithm's
  // initializers), though autoshard never costs them.
  for (const auto& t : model.training_info()) {
    RETURN_IF_ERROR(
        CheckGraph(t.initialization(), model_dir, canonical_dir, &files));
    RETURN_IF_ERROR(
        CheckGraph(t.algorithm(), model_dir, canonical_dir, &files));
  }
  return std::vector<std::string>(files.begin(), files.end());
}

absl::Status WriteFileAtomically(const fs::path& path, absl::string_view bytes,
                                 const BeforeRename& before_rename) {
  return WriteFileAtomicallyWith(
      path,
      [&](int fd) -> absl::Status {
        size_t done = 0;
        while (done < bytes.size()) {
          ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) {
            return absl::InternalError(
                absl::StrCat(path.string(), ": write failed at byte ", done,
                             ": ", std::strerror(n < 0 ? errno : ENOSPC)));
          }
          done += static_cast<size_t>(n);
        }
        return absl::OkStatus();
      },
      before_rename);
}

absl::Status WriteFileAtomicallyWith(
    const fs::path& path, const std::function<absl::Status(int fd)>& write,
    const BeforeRename& before_rename) {
  fs::path dir =
      path.parent_path().empty() ? fs::path(".") : path.parent_path();
  // A short hidden name beside the target (so the rename stays in one file
  // system and long target names still fit), created with O_EXCL and mode
  // 0666 so the user's umask applies as to any new file.
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    static std::atomic<uint64_t> counter{0};
    const uint64_t salt =
        static_cast<uint64_t>(
            std::chrono::steady_clock::now().time_since_epoch().count()) +
        counter.fetch_add(1);
    tmp = (dir /
           absl::StrCat(".autoshard_tmp", ::getpid(), "_", salt % 100000000))
              .string();
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat(path.string(), ": cannot write in '", dir.string(),
                     "': ", std::strerror(errno)));
  }
  if (absl::Status s = write(fd); !s.ok()) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return absl::InternalError(absl::StrCat(path.string(), ": write failed"));
  }
  if (before_rename) {
    if (absl::Status s = before_rename(tmp); !s.ok()) {
      ::unlink(tmp.c_str());
      return s;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    ::unlink(tmp.c_str());
    return absl::PermissionDeniedError(
        absl::StrCat(path.string(), ": cannot rename into place: ", reason));
  }
  return absl::OkStatus();
}

absl::StatusOr<SharedFile> ShareFile(const fs::path& src, const fs::path& dst) {
  const int in = ::open(src.c_str(), O_RDONLY | O_CLOEXEC);
  if (in >= 0) {
    struct stat st;
    const int out =
        ::fstat(in, &st) == 0
            ? ::open(dst.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                     st.st_mode & 07777)
            : -1;
    const bool cloned = out >= 0 && ::ioctl(out, FICLONE, in) == 0;
    if (out >= 0) ::close(out);
    ::close(in);
    if (cloned) return SharedFile::kCloned;
    // Not offered here (EOPNOTSUPP, EXDEV, EINVAL...): the empty file goes.
    if (out >= 0) ::unlink(dst.c_str());
  }
  std::error_code ec;
  fs::create_hard_link(src, dst, ec);
  if (ec) {
    return absl::Status(absl::StatusCode::kInvalidArgument, ec.message());
  }
  return SharedFile::kHardLinked;
}

absl::Status SaveModel(const onnx::ModelProto& model, const fs::path& path,
                       const fs::path& source_dir,
                       const std::vector<std::string>& external_files,
                       const BeforeRename& before_rename,
                       const StreamedWeights& streamed,
                       const WriteProgress& progress) {
  std::error_code ec;
  fs::path out_dir =
      path.parent_path().empty() ? fs::path(".") : path.parent_path();
  if (!fs::is_directory(out_dir, ec)) {
    return PathError(
        path, absl::StrCat("folder '", out_dir.string(), "' does not exist"));
  }
  fs::path src_canonical =
      fs::canonical(source_dir.empty() ? "." : source_dir, ec);
  fs::path out_canonical = fs::canonical(out_dir, ec);
  // Clones and links made by this call, removed again if anything fails.
  std::vector<fs::path> made;
  auto undo = [&made]() {
    std::error_code ignored;
    for (const fs::path& p : made) fs::remove(p, ignored);
  };
  if (!external_files.empty() && src_canonical != out_canonical) {
    for (const std::string& rel : external_files) {
      // Link the file itself, not a symlink to it (CheckExternalData made
      // sure it resolves inside the model's folder).
      fs::path src = fs::canonical(src_canonical / rel, ec);
      if (ec) {
        undo();
        return PathError(path,
                         absl::StrCat("external data '", rel, "' is missing"));
      }
      fs::path dst = out_canonical / rel;
      if (fs::exists(fs::symlink_status(dst, ec))) {
        // The same file (a hard link), or a clone of it an earlier write
        // made (the same bytes; read only where the file system clones).
        if (fs::equivalent(src, dst, ec) || SameBytes(src, dst)) continue;
        undo();
        return PathError(path,
                         absl::StrCat("external data '", dst.string(),
                                      "' already exists and is another file; "
                                      "not overwritten"));
      }
      fs::create_directories(dst.parent_path(), ec);
      absl::StatusOr<SharedFile> shared = ShareFile(src, dst);
      if (!shared.ok()) {
        undo();
        return PathError(
            path,
            absl::StrCat("cannot clone or hard-link external data '",
                         src.string(), "' into '", out_dir.string(), "' (",
                         shared.status().message(),
                         "); write the output on the model's file system, "
                         "e.g. beside the model. Weights are never copied"));
      }
      made.push_back(dst);
    }
  }
  if (!streamed.empty()) {
    absl::Status s = WriteFileAtomicallyWith(
        path,
        [&](int fd) {
          return WriteStreamedModel(model, streamed, fd, path.string(),
                                    progress);
        },
        before_rename);
    if (!s.ok()) undo();
    return s;
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    undo();
    return absl::InternalError(
        absl::StrCat(path.string(), ": cannot serialize the model"));
  }
  absl::Status s = WriteFileAtomically(path, bytes, before_rename);
  if (!s.ok()) undo();
  return s;
}

absl::Status CheckModelFile(const fs::path& path) {
  // Inline weights are not read (a model with external data is small).
  absl::StatusOr<LoadedModel> streamed = LoadModel(path, true);
  const bool placeholders = streamed.ok() && !streamed->streamed.empty() &&
                            streamed->external_files.empty();
  try {
    if (placeholders) {
      onnx::checker::check_model(
          WithPlaceholderData(streamed->model, streamed->streamed.tensors));
      return absl::OkStatus();
    }
    onnx::checker::check_model(path.string());
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("ONNX checker: ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace autoshard
