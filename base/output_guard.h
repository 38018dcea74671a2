// Guards for a command's outputs: no output may be (or become) one of its
// inputs or another output, and a run that fails part-way leaves every
// earlier file exactly as it was.
//
// Note [Outputs are all or nothing]
// Before any work is written, CheckOutputAliases compares every output, and
// every hard link SaveModel is about to make for external data, with every
// input and with each other, by canonical path (symlinked folders resolved)
// and by inode (hard links). Then OutputBackup hard-links each file about
// to be replaced (outputs and those links) to a hidden name beside it; a
// failure renames each back (the same inode, untouched), a success removes
// the backups. A folder made for outputs (CreatedFolders) is removed again
// when nothing was written into it.
#ifndef AUTOSHARD_BASE_OUTPUT_GUARD_H_
#define AUTOSHARD_BASE_OUTPUT_GUARD_H_

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace autoshard {

// `path` relative to the folder `dir` ("../model.onnx" for model.onnx and
// split/), for a file in `dir` that names `path` (the split manifest's
// `model`); absolute when no relative path exists.
std::string PathFromFolder(const std::string& path, const std::string& dir);

// Checks every output path before any work is written, so that a bad path
// loses nothing: outputs are distinct, none is an input, none is an existing
// non-regular file (device, FIFO, symlink, folder) or a read-only file, and
// each folder exists and is writable.
absl::Status CheckOutputPaths(const std::vector<std::string>& outputs,
                              const std::vector<std::filesystem::path>& inputs);

// The hard links SaveModel(…, output, source_dir, external_files) makes:
// output's folder / each file, when that folder is not source_dir.
std::vector<std::filesystem::path> PlannedDataLinks(
    const std::filesystem::path& output,
    const std::filesystem::path& source_dir,
    const std::vector<std::string>& external_files);

// InvalidArgument naming the output when an output (or a planned link) is
// the same file as an input (by path or inode), two name the same file, an
// output names a planned link, or a planned link's name already holds
// another file than its source (`link_sources`, in the order of `links`).
absl::Status CheckOutputAliases(
    const std::vector<std::string>& outputs,
    const std::vector<std::filesystem::path>& inputs,
    const std::vector<std::filesystem::path>& links,
    const std::vector<std::filesystem::path>& link_sources);

// InvalidArgument when an external-data file would land on a name the split
// folder writes itself (manifest.json, stage_<s>.onnx for s < num_stages).
absl::Status CheckSplitNames(const std::vector<std::string>& external_files,
                             int num_stages);

// Note [Outputs are all or nothing]: keeps the earlier files at given paths
// until Commit; Restore puts them back and removes new ones.
class OutputBackup {
 public:
  OutputBackup() = default;
  OutputBackup(const OutputBackup&) = delete;
  OutputBackup& operator=(const OutputBackup&) = delete;
  // Restores unless committed.
  ~OutputBackup();
  // Remembers `path`: a regular file there is hard-linked to a backup name.
  // Errors: Internal when the backup link cannot be made.
  absl::Status Keep(const std::filesystem::path& path);
  // Puts every kept file back (a path that had none is removed).
  void Restore();
  // Drops the backups: the new files stay.
  void Commit();

 private:
  // (path, backup; empty when the path held no file)
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> kept_;
  bool done_ = false;
};

// Folders made for outputs; on destruction, those still empty are removed
// (deepest first).
class CreatedFolders {
 public:
  CreatedFolders() = default;
  CreatedFolders(const CreatedFolders&) = delete;
  CreatedFolders& operator=(const CreatedFolders&) = delete;
  ~CreatedFolders();
  // Like create_directories; remembers each folder it made. False on error.
  bool Make(const std::filesystem::path& dir);

 private:
  std::vector<std::filesystem::path> made_;
};

}  // namespace autoshard

#endif  // AUTOSHARD_BASE_OUTPUT_GUARD_H_
