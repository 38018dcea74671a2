// RenderDot (declared in writers/dot_graph.h): runs Graphviz's
// `dot` on a temporary file, without a shell.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "writers/dot_graph.h"

extern char** environ;

namespace autoshard {
namespace {

namespace fs = std::filesystem;

// A fresh folder under the system's temporary folder, removed on scope exit.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern =
        (fs::temp_directory_path() / "autoshard-dot-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

absl::StatusOr<std::string> RenderDot(absl::string_view dot, GraphFormat format,
                                      double timeout_s) {
  const char* kind = format == GraphFormat::kPng   ? "png"
                     : format == GraphFormat::kPdf ? "pdf"
                                                   : "svg";
  ScratchDir dir;
  if (dir.path().empty()) {
    return absl::InternalError("cannot make a temporary folder for Graphviz");
  }
  const fs::path in = dir.path() / "graph.dot";
  const fs::path out = dir.path() / absl::StrCat("graph.", kind);
  const fs::path err = dir.path() / "stderr.txt";
  {
    std::ofstream file(in, std::ios::binary);
    file << dot;
    if (!file)
      return absl::InternalError("cannot write the DOT file for Graphviz");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  std::string tsvg = absl::StrCat("-T", kind), o = "-o", in_path = in.string(),
              out_path = out.string(), program = "dot";
  char* argv[] = {program.data(), tsvg.data(),     in_path.data(),
                  o.data(),       out_path.data(), nullptr};
  pid_t pid = 0;
  const int spawned =
      posix_spawnp(&pid, "dot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned == ENOENT) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Graphviz's dot is not installed, so no ", kind,
        " can be laid out: install "
        "it (Debian: apt-get install graphviz), or write the graph as "
        ".dot"));
  }
  if (spawned != 0) {
    return absl::InternalError(
        absl::StrCat("cannot run Graphviz's dot: error ", spawned));
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(timeout_s);
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return absl::DeadlineExceededError(absl::StrCat(
          "Graphviz's dot took over ", timeout_s,
          " s to lay the graph out; write it as .dot, or use --graph-detail "
          "runs"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(
        absl::StrCat("Graphviz's dot failed: ", ReadAll(err)));
  }
  return ReadAll(out);
}

}  // namespace autoshard
