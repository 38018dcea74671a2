#include "sharder/compile_oracle.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <atomic>
#include <regex>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "graph/model_io.h"
#include "sharder/emit.h"

namespace autoshard {
namespace fs = std::filesystem;
namespace {

// 'path' quoted for /bin/sh.
std::string ShellQuote(const std::string& s) {
  return absl::StrCat("'", absl::StrReplaceAll(s, {{"'", "'\\''"}}), "'");
}

}  // namespace

CompileVerdict ParseCompilerOutput(int exit_code, absl::string_view output) {
  CompileVerdict v;
  static const std::regex kOom(R"(Out of memory on tile (\d+): (\d+) bytes)");
  std::string text(output);
  std::smatch m;
  if (std::regex_search(text, m, kOom)) {
    v.tile = std::stoll(m[1].str());
    v.bytes = std::stoll(m[2].str());
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

CompileOracle::CompileOracle(std::string command, const onnx::ModelProto& model,
                             fs::path source_dir,
                             std::vector<std::string> external_files, int jobs)
    : command_(std::move(command)),
      model_(model),
      source_dir_(std::move(source_dir)),
      external_files_(std::move(external_files)),
      jobs_(std::max(jobs, 1)) {}

absl::StatusOr<CompileVerdict> CompileOracle::CompileOne(
    const std::vector<int32_t>& ipu_of_node, const fs::path& dir,
    double amp) const {
  onnx::ModelProto candidate = model_;
  auto* graph = candidate.mutable_graph();
  for (int i = 0; i < graph->node_size(); ++i) {
    SetPlacement(ipu_of_node[i], ipu_of_node[i], graph->mutable_node(i));
  }
  const fs::path path = dir / "candidate.onnx";
  if (absl::Status s = SaveModel(candidate, path, source_dir_, external_files_);
      !s.ok()) {
    return s;
  }
  std::string cmd = absl::StrCat(
      "export AUTOSHARD_AVAILABLE_MEMORY_PROPORTION=", amp, "; ", command_);
  if (absl::StrContains(cmd, "{model}")) {
    cmd = absl::StrReplaceAll(cmd, {{"{model}", ShellQuote(path.string())}});
  } else {
    absl::StrAppend(&cmd, " ", ShellQuote(path.string()));
  }
  absl::StrAppend(&cmd, " 2>&1");
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr)
    return absl::InternalError("cannot run the compile command");
  std::string output;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    output.append(buffer, n);
  const int status = ::pclose(pipe);
  const int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return ParseCompilerOutput(exit_code, output);
}

absl::StatusOr<std::vector<CompileVerdict>> CompileOracle::Compile(
    const std::vector<std::vector<int32_t>>& candidates, double amp) const {
  std::vector<absl::StatusOr<CompileVerdict>> results(
      candidates.size(), absl::InternalError("not run"));
  std::atomic<size_t> next{0};
  auto worker = [&](int job) {
    std::string pattern = (fs::temp_directory_path() /
                           absl::StrCat("autoshard_compile_", job, "_XXXXXX"))
                              .string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      for (size_t i = next.fetch_add(1); i < candidates.size();
           i = next.fetch_add(1)) {
        results[i] = absl::InternalError(
            "cannot make a temporary folder for the compiler");
      }
      return;
    }
    const fs::path dir(pattern);
    for (size_t i = next.fetch_add(1); i < candidates.size();
         i = next.fetch_add(1)) {
      results[i] = CompileOne(candidates[i], dir, amp);
    }
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  };
  std::vector<std::thread> threads;
  const int jobs = std::min<int>(jobs_, std::max<size_t>(candidates.size(), 1));
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker, j);
  worker(0);
  for (auto& t : threads) t.join();
  std::vector<CompileVerdict> verdicts;
  for (auto& r : results) {
    if (!r.ok()) return r.status();
    verdicts.push_back(*std::move(r));
  }
  return verdicts;
}

}  // namespace autoshard
