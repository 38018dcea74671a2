#include "sharder/oracle/compile_oracle.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <atomic>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "sharder/oracle/compile_process.h"

namespace autoshard {
namespace fs = std::filesystem;
namespace {

// 'path' quoted for /bin/sh.
std::string ShellQuote(const std::string& s) {
  return absl::StrCat("'", absl::StrReplaceAll(s, {{"'", "'\\''"}}), "'");
}

// Reads the digits at the front of `*text` into `*value` and drops them.
// False when there are none or they do not fit an int64 (nothing dropped).
bool ConsumeNumber(absl::string_view* text, int64_t* value) {
  size_t n = 0;
  while (n < text->size() && absl::ascii_isdigit((*text)[n])) ++n;
  if (n == 0 || !absl::SimpleAtoi(text->substr(0, n), value)) return false;
  text->remove_prefix(n);
  return true;
}

// Every "<prefix>T: M bytes" in `output` whose numbers fit an int64, in
// order, by a linear scan (std::regex recursed per character and overflowed
// the stack on long outputs); at most `most`.
std::vector<std::pair<int64_t, int64_t>> FindTileBytes(absl::string_view output,
                                                       absl::string_view prefix,
                                                       size_t most) {
  std::vector<std::pair<int64_t, int64_t>> found;
  for (size_t at = output.find(prefix);
       at != absl::string_view::npos && found.size() < most;
       at = output.find(prefix, at + 1)) {
    absl::string_view rest = output.substr(at + prefix.size());
    int64_t tile = 0, bytes = 0;
    if (ConsumeNumber(&rest, &tile) && absl::ConsumePrefix(&rest, ": ") &&
        ConsumeNumber(&rest, &bytes) && absl::StartsWith(rest, " bytes")) {
      found.emplace_back(tile, bytes);
    }
  }
  return found;
}

// The first "Out of memory on tile T: M bytes" in `output`.
bool FindOutOfMemory(absl::string_view output, int64_t* tile, int64_t* bytes) {
  const auto found = FindTileBytes(output, "Out of memory on tile ", 1);
  if (found.empty()) return false;
  *tile = found[0].first;
  *bytes = found[0].second;
  return true;
}

// The verdict of a compile command that ran to its end (`run`, not timed
// out): a signal, a command that cannot be run (exit 126 or 127: an error),
// else what its output says, with its last line when it says nothing more.
absl::StatusOr<CompileVerdict> VerdictOf(const CommandResult& run) {
  const std::string& output = run.output;
  const int status = run.wait_status;
  // The last non-empty line the command printed, for messages.
  std::string last_line;
  for (absl::string_view line :
       absl::StrSplit(output, '\n', absl::SkipWhitespace())) {
    last_line = std::string(line);
  }
  if (WIFSIGNALED(status)) {
    CompileVerdict v;
    v.unparsable =
        absl::StrCat("the compile command died of signal ", WTERMSIG(status),
                     last_line.empty() ? "" : ": ", last_line);
    return v;
  }
  const int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  if (exit_code == 126 || exit_code == 127) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--compile-cmd cannot be run (exit ", exit_code, "): ", last_line));
  }
  CompileVerdict v = ParseCompilerOutput(exit_code, output);
  if (!v.fits && v.tile < 0 && !last_line.empty() &&
      absl::StartsWith(v.unparsable, "the compile command failed")) {
    absl::StrAppend(&v.unparsable, ": ", last_line);
  }
  return v;
}

}  // namespace

CompileVerdict ParseCompilerOutput(int exit_code, absl::string_view output) {
  CompileVerdict v;
  // Per-tile figures a compiler may print ("fullest tile T: B bytes"; the
  // fake compiler's calibration mode), bounded.
  for (const auto& [tile, bytes] :
       FindTileBytes(output, "fullest tile ", /*most=*/1 << 16)) {
    v.fullest_tiles.emplace_back(tile, bytes);
  }
  if (int64_t tile = 0, bytes = 0; FindOutOfMemory(output, &tile, &bytes)) {
    v.tile = tile;
    v.bytes = bytes;
    return v;
  }
  if (exit_code == 0) {
    v.fits = true;
    return v;
  }
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (absl::StrContains(line, "Cannot fit all variable data") ||
        absl::StrContains(line, "xchange") ||
        absl::StrContains(line, "_poplar_start")) {
      v.unparsable = std::string(line);
      return v;
    }
  }
  v.unparsable =
      absl::StrCat("the compile command failed (exit ", exit_code, ")");
  return v;
}

CompileOracle::CompileOracle(std::string command,
                             CandidateWriter write_candidate,
                             fs::path source_dir,
                             std::vector<std::string> external_files, int jobs,
                             double timeout_s,
                             std::chrono::steady_clock::time_point deadline)
    : command_(std::move(command)),
      write_candidate_(std::move(write_candidate)),
      source_dir_(std::move(source_dir)),
      external_files_(std::move(external_files)),
      jobs_(std::max(jobs, 1)),
      timeout_s_(timeout_s),
      deadline_(deadline) {}

absl::StatusOr<std::vector<fs::path>> CompileOracle::LinkDataFiles(
    const fs::path& dir) const {
  // Hard links, or symlinks to the real files where a hard link cannot be
  // made (another file system, a file of another user): the compiler only
  // reads them. They are the candidate's inputs, not outputs: the writer
  // must not replace them.
  std::vector<fs::path> links;
  for (const std::string& rel : external_files_) {
    const fs::path dst = dir / rel;
    links.push_back(dst);
    std::error_code ec;
    const fs::path src = fs::canonical(source_dir_ / rel, ec);
    if (ec) {
      return absl::InvalidArgumentError(
          absl::StrCat((dir / "candidate.onnx").string(), ": external data '",
                       rel, "' is missing"));
    }
    if (fs::exists(fs::symlink_status(dst, ec))) continue;
    fs::create_directories(dst.parent_path(), ec);
    fs::create_hard_link(src, dst, ec);
    if (ec) fs::create_symlink(src, dst, ec);
  }
  return links;
}

std::string CompileOracle::CommandFor(const fs::path& path, double amp) const {
  // The path reaches the command through the environment, so {model} works
  // bare or inside double quotes.
  std::string cmd =
      absl::StrCat("export AUTOSHARD_AVAILABLE_MEMORY_PROPORTION=", amp,
                   " AUTOSHARD_MODEL=", ShellQuote(path.string()), "; ");
  if (absl::StrContains(command_, "{model}")) {
    absl::StrAppend(&cmd, absl::StrReplaceAll(
                              command_, {{"{model}", "\"$AUTOSHARD_MODEL\""}}));
  } else {
    absl::StrAppend(&cmd, command_, " \"$AUTOSHARD_MODEL\"");
  }
  return cmd;
}

absl::StatusOr<CompileVerdict> CompileOracle::CompileOne(
    const std::vector<int32_t>& ipu_of_node, const fs::path& dir,
    double amp) const {
  const fs::path path = dir / "candidate.onnx";
  ASSIGN_OR_RETURN(std::vector<fs::path> links, LinkDataFiles(dir));
  RETURN_IF_ERROR(write_candidate_(ipu_of_node, path, links));
  const auto now = std::chrono::steady_clock::now();
  const auto limit =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(std::min(timeout_s_, 1e9)));
  const bool search_ends_first = deadline_ - now < limit;
  ASSIGN_OR_RETURN(
      CommandResult run,
      RunShellCommand(CommandFor(path, amp),
                      search_ends_first ? deadline_ : now + limit));
  if (run.timed_out) {
    CompileVerdict v;
    v.unparsable =
        search_ends_first
            ? "the compile command was stopped: --max-search-seconds ran out"
            : absl::StrCat("the compile command timed out after ", timeout_s_,
                           " s (--compile-timeout)");
    return v;
  }
  return VerdictOf(run);
}

absl::StatusOr<std::vector<CompileVerdict>> CompileOracle::Compile(
    const std::vector<std::vector<int32_t>>& candidates, double amp) const {
  std::vector<absl::StatusOr<CompileVerdict>> results(
      candidates.size(), absl::InternalError("not run"));
  std::error_code ec;
  const fs::path temp = fs::temp_directory_path(ec);
  if (ec || !fs::is_directory(temp, ec)) {
    return absl::FailedPreconditionError(
        "--compile-cmd: no usable temporary folder (check TMPDIR) for the "
        "candidates");
  }
  // Note [A compile never outlives its limit or a signal]: the workers
  // inherit the blocked termination signals.
  sigset_t termination, old_mask;
  TerminationSignals(&termination);
  pthread_sigmask(SIG_BLOCK, &termination, &old_mask);
  std::atomic<size_t> next{0};
  auto worker = [&](int job) {
    std::string pattern =
        (temp / absl::StrCat("autoshard_compile_", job, "_XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      for (size_t i = next.fetch_add(1); i < candidates.size();
           i = next.fetch_add(1)) {
        results[i] = absl::InternalError(
            absl::StrCat("--compile-cmd: cannot make a folder in ",
                         temp.string(), " (check TMPDIR)"));
      }
      return;
    }
    const fs::path dir(pattern);
    for (size_t i = next.fetch_add(1); i < candidates.size();
         i = next.fetch_add(1)) {
      results[i] = CompileOne(candidates[i], dir, amp);
      if (absl::IsCancelled(results[i].status())) break;
    }
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  };
  std::vector<std::thread> threads;
  const int jobs = std::min<int>(jobs_, std::max<size_t>(candidates.size(), 1));
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker, j);
  worker(0);
  for (auto& t : threads) t.join();
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);  // a pending one ends us
  std::vector<CompileVerdict> verdicts;
  for (auto& r : results) {
    if (!r.ok()) return r.status();
    verdicts.push_back(*std::move(r));
  }
  return verdicts;
}

}  // namespace autoshard
