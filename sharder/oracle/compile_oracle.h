// A real compiler as the search's judge, as PopRT used it (DESIGN.md §4.2):
// each candidate split is written as an annotated model, the user's command
// compiles it, and the compiler's out-of-memory message says which tile
// overflowed by how much.
#ifndef AUTOSHARD_SHARDER_ORACLE_COMPILE_ORACLE_H_
#define AUTOSHARD_SHARDER_ORACLE_COMPILE_ORACLE_H_

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace autoshard {

// What one compile said.
struct CompileVerdict {
  bool fits = false;  // the command exited 0
  int64_t tile = -1;  // the global tile that overflowed; -1 unknown
  int64_t bytes = 0;  // bytes used on it (0 unknown)
  // For failures other than "Out of memory on tile T: M bytes" (variable data
  // that cannot fit, exchange or code overflow, a crash): the compiler's
  // line that says so, or its exit status.
  std::string unparsable;
  // (global tile, bytes) of each "fullest tile T: M bytes" line: what a
  // compile wrapper that prints the memory report's fullest tile per IPU
  // says (`autoshard calibrate` reads them; docs/calibration.md §6).
  std::vector<std::pair<int64_t, int64_t>> fullest_tiles;
};

// Reads a compiler's exit code and output. Recognises PopRT/Poplar's
// "Out of memory on tile T: M bytes used..." (the first such line);
// "Cannot fit all variable data onto one or more tiles", exchange-overflow
// and "_poplar_start" code-overflow messages are reported as unparsable
// failures, as is any other non-zero exit.
CompileVerdict ParseCompilerOutput(int exit_code, absl::string_view output);

// Writes the candidate model in which node i (file order) runs on IPU and
// pipeline stage `ipu_of_node[i]` to `path`, to a temporary name renamed into
// place, replacing none of `inputs` (the external-data files beside `path`,
// which the compiler reads). Called from several threads at once, each with
// its own folder. The planner's writer (sharder/compile_judge.h) is the
// library's WriteOutputs (writers/write_outputs.h).
using CandidateWriter = std::function<absl::Status(
    const std::vector<int32_t>& ipu_of_node, const std::filesystem::path& path,
    const std::vector<std::filesystem::path>& inputs)>;

class CompileOracle {
 public:
  // `command` is run by /bin/sh with "{model}" replaced by the candidate's
  // path (appended when absent; it comes as "$AUTOSHARD_MODEL", so a bare or
  // double-quoted {model} both work). `write_candidate` writes each candidate
  // model; `external_files` are the model's external-data files in
  // `source_dir`, hard-linked (symlinked across file systems) beside the
  // candidates once per folder. `jobs` candidates are compiled at once
  // (>= 1). A compile is killed after `timeout_s` seconds or at `deadline`
  // (the search's), whichever is first, and its candidate does not fit (Note
  // [A compile never outlives its limit or a signal]).
  CompileOracle(std::string command, CandidateWriter write_candidate,
                std::filesystem::path source_dir,
                std::vector<std::string> external_files, int jobs,
                double timeout_s = 1800,
                std::chrono::steady_clock::time_point deadline =
                    std::chrono::steady_clock::time_point::max());

  // Compiles each candidate (IPU = pipeline stage of every node, in file
  // order) and returns the verdicts in the same order. Errors: no temporary
  // folder (TMPDIR), a candidate that cannot be written (the writer's error),
  // a command that cannot be run (exit 126 or 127); Cancelled when a
  // termination signal came (it is delivered when this returns, after the
  // temporary folders are removed).
  // The command sees AUTOSHARD_AVAILABLE_MEMORY_PROPORTION=`amp` in its
  // environment (PopRT retried with 0.3 and 0.1).
  absl::StatusOr<std::vector<CompileVerdict>> Compile(
      const std::vector<std::vector<int32_t>>& candidates, double amp) const;

 private:
  absl::StatusOr<CompileVerdict> CompileOne(
      const std::vector<int32_t>& ipu_of_node, const std::filesystem::path& dir,
      double amp) const;
  // The shell command that compiles the model at `path` with `amp`.
  std::string CommandFor(const std::filesystem::path& path, double amp) const;
  // Links the external-data files into `dir` (once: existing names are kept)
  // and returns their paths there. InvalidArgument for a file gone from
  // source_dir (as SaveModel says it).
  absl::StatusOr<std::vector<std::filesystem::path>> LinkDataFiles(
      const std::filesystem::path& dir) const;

  std::string command_;
  CandidateWriter write_candidate_;
  std::filesystem::path source_dir_;
  std::vector<std::string> external_files_;
  int jobs_;
  double timeout_s_;
  std::chrono::steady_clock::time_point deadline_;
};

}  // namespace autoshard

#endif  // AUTOSHARD_SHARDER_ORACLE_COMPILE_ORACLE_H_
