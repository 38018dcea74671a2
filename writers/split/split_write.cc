// Writing a split folder (writers/split/split.h: CheckSplitDir, StageSplit,
// WriteSplit).
//
// Note [A split folder is written as a whole]
// The stages and the manifest are written into a fresh folder beside DIR
// (".autoshard_tmp_split_<random>", so the final rename stays on one file
// system), each file atomically, every stage checked, manifest.json last.
// Then that folder takes DIR's place: a plain rename when DIR does not exist
// or is empty; when DIR holds an earlier split, renameat2(RENAME_EXCHANGE)
// swaps the two folders in one step and the old one is removed (on file
// systems without the exchange: two renames, the old folder restored if the
// second fails). A reader of DIR sees the old split or the new one, never a
// mix; an error or a kill before the rename leaves only the temporary folder,
// which is removed on error (the CLI defers termination signals meanwhile).
// StageSplit does everything up to that rename (every check that can fail);
// `shard --split-dir` stages first, writes its other outputs, and moves the
// split into place last, so a failing stage replaces no earlier output.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/step_counts.h"
#include "google/protobuf/util/json_util.h"
#include "graph/model_io.h"
#include "graph/onnx_guard.h"
#include "graph/onnx_inference.h"
#include "graph/shape_analysis.h"
#include "onnx/shape_inference/implementation.h"
#include "writers/json_numbers.h"
#include "writers/split/split.h"

namespace autoshard {
namespace {

namespace fs = std::filesystem;

constexpr char kManifest[] = "manifest.json";

absl::Status DirError(const fs::path& dir, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(dir.string(), ": ", reason));
}

// The earlier split's manifest in `dir`, if it has one of our format.
std::optional<proto::SplitManifest> ReadManifest(const fs::path& dir) {
  std::ifstream in(dir / kManifest);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  proto::SplitManifest m;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(
           QuoteNumbersInStringFields(text, *m.GetDescriptor()), &m, options)
           .ok() ||
      m.format() != "autoshard-split") {
    return std::nullopt;
  }
  return m;
}

// True when every file below `dir` is one the manifest lists (folders on
// the way to listed files are fine).
bool OnlyListedFiles(const fs::path& dir, const proto::SplitManifest& m) {
  std::set<fs::path> listed = {kManifest};
  for (const auto& s : m.stages())
    listed.insert(fs::path(s.file()).lexically_normal());
  for (const auto& f : m.data_files())
    listed.insert(fs::path(f).lexically_normal());
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) continue;
    if (!listed.contains(fs::relative(it->path(), dir, ec))) return false;
  }
  return !ec;
}

// A new empty folder beside `dir`, made with mode 0777 so the umask applies
// as to any new folder.
absl::StatusOr<fs::path> MakeTempDir(const fs::path& parent) {
  static std::atomic<uint64_t> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    const uint64_t salt =
        static_cast<uint64_t>(
            std::chrono::steady_clock::now().time_since_epoch().count()) +
        counter.fetch_add(1) * 0x9e3779b97f4a7c15ULL + ::getpid();
    fs::path tmp = parent / absl::StrFormat(".autoshard_tmp_split_%016x", salt);
    if (::mkdir(tmp.c_str(), 0777) == 0) return tmp;
    if (errno != EEXIST) {
      return absl::PermissionDeniedError(absl::StrCat(
          parent.string(), ": cannot make a folder: ", std::strerror(errno)));
    }
  }
  return absl::InternalError(
      absl::StrCat(parent.string(), ": no free temporary folder name"));
}

// ONNX's shape inference in strict mode (type checks, errors thrown) on a
// copy without large weights; the error's message, or empty.
std::string StrictInferenceError(const onnx::ModelProto& model) {
  std::unique_ptr<onnx::ModelProto> copy = CopyWithoutLargeWeights(model);
  absl::StatusOr<std::string> error =
      RunOnnxInference(copy.get(), InferencePurpose::kStageCheck);
  return error.ok() ? *error : std::string(error.status().message());
}

// Moves the finished folder `tmp` to `dir` (Note [A split folder is written
// as a whole]).
absl::Status MoveFolderIntoPlace(const fs::path& tmp, const fs::path& dir) {
  std::error_code ec;
  const bool exists = fs::exists(fs::symlink_status(dir, ec));
  if (!exists || fs::is_empty(dir, ec)) {
    if (::rename(tmp.c_str(), dir.c_str()) != 0) {
      return DirError(dir, absl::StrCat("cannot rename the new split into "
                                        "place: ",
                                        std::strerror(errno)));
    }
    return absl::OkStatus();
  }
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(),
                  RENAME_EXCHANGE) == 0) {
    fs::remove_all(tmp, ec);  // now the earlier split
    return absl::OkStatus();
  }
  if (errno != EINVAL && errno != ENOSYS) {
    return DirError(dir, absl::StrCat("cannot swap the new split into place: ",
                                      std::strerror(errno)));
  }
  ASSIGN_OR_RETURN(fs::path old,
                   MakeTempDir(dir.parent_path().empty() ? fs::path(".")
                                                         : dir.parent_path()));
  fs::remove(old, ec);
  if (::rename(dir.c_str(), old.c_str()) != 0) {
    return DirError(dir, absl::StrCat("cannot move the earlier split aside: ",
                                      std::strerror(errno)));
  }
  if (::rename(tmp.c_str(), dir.c_str()) != 0) {
    const int err = errno;
    (void)::rename(old.c_str(), dir.c_str());
    return DirError(dir, absl::StrCat("cannot rename the new split into "
                                      "place: ",
                                      std::strerror(err)));
  }
  fs::remove_all(old, ec);
  return absl::OkStatus();
}

// Whether the original model passes the checker / strict inference, asked
// only when a stage fails one of them.
class OriginalChecks {
 public:
  explicit OriginalChecks(const fs::path& path) : path_(path) {}
  std::string CheckerError() {
    if (!checker_) checker_ = std::string(CheckModelFile(path_).message());
    return *checker_;
  }
  std::string InferenceError() {
    if (!inference_) {
      auto loaded = LoadModel(path_);
      inference_ = loaded.ok() ? StrictInferenceError(loaded->model)
                               : std::string(loaded.status().message());
    }
    return *inference_;
  }

 private:
  fs::path path_;
  std::optional<std::string> checker_, inference_;
};

}  // namespace

absl::Status CheckSplitDir(const fs::path& dir,
                           const std::vector<fs::path>& inputs) {
  if (dir.empty()) {
    return absl::InvalidArgumentError("the split folder's name is empty");
  }
  std::error_code ec;
  const fs::path parent =
      dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
  if (!fs::is_directory(parent, ec)) {
    return DirError(
        dir, absl::StrCat("folder '", parent.string(), "' does not exist"));
  }
  if (::access(parent.c_str(), W_OK) != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        dir.string(), ": folder '", parent.string(), "' is not writable"));
  }
  const fs::path normal = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  for (const fs::path& in : inputs) {
    const fs::path p = fs::weakly_canonical(fs::absolute(in, ec), ec);
    auto [d, i] =
        std::mismatch(normal.begin(), normal.end(), p.begin(), p.end());
    if (d == normal.end()) {
      return DirError(
          dir, absl::StrCat(p == normal ? "is" : "contains",
                            " an input or output of this run (", in.string(),
                            "); refusing to write the split there"));
    }
  }
  const fs::file_status st = fs::symlink_status(dir, ec);
  if (!fs::exists(st)) return absl::OkStatus();
  if (fs::is_symlink(st)) {
    return DirError(dir, "is a symlink; refusing to replace it");
  }
  if (!fs::is_directory(st)) {
    return DirError(dir, "exists and is not a folder; refusing to replace it");
  }
  if (fs::is_empty(dir, ec)) return absl::OkStatus();
  std::optional<proto::SplitManifest> earlier = ReadManifest(dir);
  if (!earlier || !OnlyListedFiles(dir, *earlier)) {
    return DirError(dir,
                    "exists and is neither empty nor an earlier split "
                    "(manifest.json and the files it lists); refusing to "
                    "replace it");
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat(dir.string(), ": the earlier split is not writable"));
  }
  return absl::OkStatus();
}

StagedSplit::StagedSplit(StagedSplit&& other) noexcept
    : tmp_(std::exchange(other.tmp_, {})), dir_(std::move(other.dir_)) {}

StagedSplit::~StagedSplit() {
  if (tmp_.empty()) return;
  std::error_code ec;
  fs::remove_all(tmp_, ec);
}

absl::Status StagedSplit::MoveIntoPlace() {
  if (tmp_.empty()) return absl::InternalError("the split was moved already");
  RETURN_IF_ERROR(MoveFolderIntoPlace(tmp_, dir_));
  tmp_.clear();
  return absl::OkStatus();
}

absl::StatusOr<StagedSplit> StageSplit(const Split& split, const fs::path& dir,
                                       const fs::path& source_dir,
                                       const fs::path& model_path,
                                       std::vector<std::string>* warnings) {
  RETURN_IF_ERROR(CheckSplitDir(dir, {}));
  std::set<fs::path> names = {kManifest};
  for (const auto& s : split.manifest.stages()) names.insert(s.file());
  for (const auto& f : split.manifest.data_files()) {
    if (names.contains(fs::path(f).lexically_normal())) {
      return DirError(dir, absl::StrCat("external data file '", f,
                                        "' has the name of a split file"));
    }
  }
  const fs::path parent =
      dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
  ASSIGN_OR_RETURN(fs::path tmp, MakeTempDir(parent));
  StagedSplit staged(tmp, dir);  // removes tmp on every error below
  OriginalChecks original(model_path);
  for (size_t i = 0; i < split.stages.size(); ++i) {
    const SplitStageModel& stage = split.stages[i];
    const std::string& file = split.manifest.stages(i).file();
    auto check = [&](const fs::path& written) -> absl::Status {
      std::string error(CheckModelFile(written).message());
      std::string original_error;
      const char* what = "ONNX checker";
      if (!error.empty()) {
        original_error = original.CheckerError();
      } else {
        error = StrictInferenceError(stage.model);
        what = "ONNX shape inference (strict)";
        if (!error.empty()) original_error = original.InferenceError();
      }
      if (error.empty()) return absl::OkStatus();
      if (!original_error.empty()) {
        warnings->push_back(absl::StrCat(file, " fails the ", what,
                                         " as the model does: ", error));
        return absl::OkStatus();
      }
      return absl::InternalError(absl::StrCat(
          (dir / file).string(), ": the stage fails the ", what,
          " while the model passes it (a bug in autoshard's split): ", error));
    };
    RETURN_IF_ERROR(SaveModel(stage.model, tmp / file, source_dir,
                              stage.external_files, check, stage.streamed));
  }
  RETURN_IF_ERROR(
      WriteFileAtomically(tmp / kManifest, NumericJson(split.manifest)));
  return staged;
}

absl::Status WriteSplit(const Split& split, const fs::path& dir,
                        const fs::path& source_dir, const fs::path& model_path,
                        std::vector<std::string>* warnings) {
  ASSIGN_OR_RETURN(StagedSplit staged,
                   StageSplit(split, dir, source_dir, model_path, warnings));
  return staged.MoveIntoPlace();
}

}  // namespace autoshard
