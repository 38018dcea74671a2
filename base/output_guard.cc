#include "base/output_guard.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace autoshard {
namespace fs = std::filesystem;
namespace {

fs::path Canonical(const fs::path& p) {
  std::error_code ec;
  return fs::weakly_canonical(fs::absolute(p, ec), ec);
}

bool SameFile(const fs::path& a, const fs::path& b) {
  if (Canonical(a) == Canonical(b)) return true;
  std::error_code ec;
  return fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec);
}

}  // namespace

std::vector<fs::path> PlannedDataLinks(
    const fs::path& output, const fs::path& source_dir,
    const std::vector<std::string>& external_files) {
  const fs::path out_dir =
      output.parent_path().empty() ? fs::path(".") : output.parent_path();
  if (Canonical(out_dir) ==
      Canonical(source_dir.empty() ? fs::path(".") : source_dir)) {
    return {};
  }
  std::vector<fs::path> links;
  for (const std::string& rel : external_files) links.push_back(out_dir / rel);
  return links;
}

absl::Status CheckOutputAliases(const std::vector<std::string>& outputs,
                                const std::vector<fs::path>& inputs,
                                const std::vector<fs::path>& links,
                                const std::vector<fs::path>& link_sources) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (const fs::path& in : inputs) {
      if (SameFile(outputs[i], in)) {
        return absl::InvalidArgumentError(
            absl::StrCat(outputs[i], ": is an input (", in.string(),
                         "); refusing to overwrite it"));
      }
    }
    for (size_t j = 0; j < i; ++j) {
      if (SameFile(outputs[i], outputs[j])) {
        return absl::InvalidArgumentError(
            absl::StrCat(outputs[i], ": is the same file as the output ",
                         outputs[j], "; give each its own file"));
      }
    }
    for (const fs::path& link : links) {
      if (Canonical(outputs[i]) == Canonical(link)) {
        return absl::InvalidArgumentError(absl::StrCat(
            outputs[i], ": is where the model's external data file '",
            link.filename().string(),
            "' is linked for the annotated model; name another file"));
      }
    }
  }
  for (size_t i = 0; i < links.size() && i < link_sources.size(); ++i) {
    std::error_code ec;
    if (fs::exists(fs::symlink_status(links[i], ec)) &&
        !fs::equivalent(links[i], link_sources[i], ec)) {
      return absl::InvalidArgumentError(absl::StrCat(
          links[i].string(),
          ": already exists and is not the model's external data file "
          "of that name; not overwritten"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSplitNames(const std::vector<std::string>& external_files,
                             int num_stages) {
  for (const std::string& rel : external_files) {
    const std::string normal = fs::path(rel).lexically_normal().string();
    absl::string_view stem = normal;
    int stage = -1;
    const bool stage_name = absl::ConsumePrefix(&stem, "stage_") &&
                            absl::ConsumeSuffix(&stem, ".onnx") &&
                            absl::SimpleAtoi(stem, &stage) && stage >= 0 &&
                            stage < num_stages;
    if (normal == "manifest.json" || stage_name) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the model's external data file '", rel,
          "' has the name of a file the split folder holds; rename it "
          "(and its location in the model) first"));
    }
  }
  return absl::OkStatus();
}

OutputBackup::~OutputBackup() {
  if (!done_) Restore();
}

absl::Status OutputBackup::Keep(const fs::path& path) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (!fs::exists(st)) {
    kept_.emplace_back(path, fs::path());
    return absl::OkStatus();
  }
  if (!fs::is_regular_file(st)) return absl::OkStatus();  // refused earlier
  const fs::path dir =
      path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::random_device random;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const fs::path backup =
        dir / absl::StrCat(".autoshard_backup_", random() % 1000000000u);
    if (::link(path.c_str(), backup.c_str()) == 0) {
      kept_.emplace_back(path, backup);
      return absl::OkStatus();
    }
    if (errno != EEXIST) break;
  }
  return absl::InternalError(absl::StrCat(
      path.string(),
      ": cannot keep the earlier file while writing: ", std::strerror(errno)));
}

void OutputBackup::Restore() {
  done_ = true;
  std::error_code ec;
  for (auto it = kept_.rbegin(); it != kept_.rend(); ++it) {
    if (it->second.empty()) {
      fs::remove(it->first, ec);
    } else if (fs::equivalent(it->second, it->first, ec)) {
      // The write failed before its rename: the path still is the earlier
      // file, and rename(2) between two links of one file does nothing and
      // leaves the backup name behind.
      fs::remove(it->second, ec);
    } else {
      fs::rename(it->second, it->first, ec);
    }
  }
  kept_.clear();
}

void OutputBackup::Commit() {
  done_ = true;
  std::error_code ec;
  for (const auto& [path, backup] : kept_) {
    if (!backup.empty()) fs::remove(backup, ec);
  }
  kept_.clear();
}

CreatedFolders::~CreatedFolders() {
  std::error_code ec;
  for (auto it = made_.rbegin(); it != made_.rend(); ++it) {
    if (fs::is_directory(*it, ec) && fs::is_empty(*it, ec)) fs::remove(*it, ec);
  }
}

bool CreatedFolders::Make(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> missing;
  for (fs::path p = fs::absolute(dir, ec).lexically_normal();
       !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  fs::create_directories(dir, ec);
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (fs::is_directory(*it, ec)) made_.push_back(*it);
  }
  return fs::is_directory(dir, ec);
}

std::string PathFromFolder(const std::string& path, const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path from =
      std::filesystem::absolute(dir, ec).lexically_normal();
  const std::filesystem::path to =
      std::filesystem::absolute(path, ec).lexically_normal();
  const std::filesystem::path relative = to.lexically_relative(from);
  return relative.empty() ? to.string() : relative.string();
}

absl::Status CheckOutputPaths(const std::vector<std::string>& outputs,
                              const std::vector<fs::path>& inputs) {
  std::error_code ec;
  std::vector<fs::path> seen;
  for (const std::string& out : outputs) {
    if (out.empty())
      return absl::InvalidArgumentError("an output path is empty");
    const fs::path path(out);
    const fs::path normal = fs::weakly_canonical(fs::absolute(path, ec), ec);
    for (const fs::path& other : seen) {
      if (other == normal) {
        return absl::InvalidArgumentError(absl::StrCat(
            out, ": named for two outputs; give each its own file"));
      }
    }
    seen.push_back(normal);
    const fs::file_status st = fs::symlink_status(path, ec);
    if (fs::exists(st)) {
      for (const fs::path& in : inputs) {
        if (fs::equivalent(path, in, ec)) {
          return absl::InvalidArgumentError(
              absl::StrCat(out, ": is an input (", in.string(),
                           "); refusing to overwrite it"));
        }
      }
      if (fs::is_directory(st)) {
        return absl::InvalidArgumentError(
            absl::StrCat(out, ": is a folder, not a file name"));
      }
      if (!fs::is_regular_file(st)) {
        return absl::InvalidArgumentError(absl::StrCat(
            out,
            ": exists and is not a regular file (a device, pipe or symlink); "
            "refusing to replace it"));
      }
      if (::access(path.c_str(), W_OK) != 0) {
        return absl::PermissionDeniedError(
            absl::StrCat(out, ": exists and is read-only"));
      }
    }
    const fs::path dir =
        path.parent_path().empty() ? fs::path(".") : path.parent_path();
    if (!fs::exists(dir, ec)) {
      return absl::InvalidArgumentError(
          absl::StrCat(out, ": folder '", dir.string(), "' does not exist"));
    }
    if (!fs::is_directory(dir, ec)) {
      return absl::InvalidArgumentError(
          absl::StrCat(out, ": '", dir.string(), "' is not a folder"));
    }
    if (::access(dir.c_str(), W_OK) != 0) {
      return absl::PermissionDeniedError(
          absl::StrCat(out, ": folder '", dir.string(), "' is not writable"));
    }
  }
  return absl::OkStatus();
}

}  // namespace autoshard
