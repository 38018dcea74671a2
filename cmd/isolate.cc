#include "cmd/isolate.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/output_guard.h"
#include "cmd/commands.h"
#include "proto/batch.pb.h"

extern char** environ;

namespace autoshard::cmd {
namespace {

// Note [One child process per batch model]: the request (a BatchRow naming
// the model and its annotated output, base64) and the child's two fds.
constexpr char kChildEnv[] = "AUTOSHARD_BATCH_CHILD";
constexpr int kAnswerFd = 3;
constexpr int kLockFd = 4;
constexpr char kModelSuffix[] = ".sharded.onnx";

bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string ReadAll(int fd) {
  std::string bytes;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return bytes;
    bytes.append(buffer, static_cast<size_t>(n));
  }
}

// The child's answer: three length-prefixed fields (the row with its
// figures, stdout text, stderr text).
std::string Frame(const std::string& field) {
  const uint64_t size = field.size();
  return std::string(reinterpret_cast<const char*>(&size), sizeof size) + field;
}

bool Unframe(const std::string& bytes, size_t* at, std::string* field) {
  uint64_t size = 0;
  if (bytes.size() - *at < sizeof size) return false;
  memcpy(&size, bytes.data() + *at, sizeof size);
  *at += sizeof size;
  if (bytes.size() - *at < size) return false;
  *field = bytes.substr(*at, size);
  *at += size;
  return true;
}

// The answer to the parent, fd 3 of a batch child: the row with its figures,
// the stdout text, the stderr text.
bool SendAnswer(int code, const Console& console, const std::string& out,
                const std::string& err) {
  proto::BatchRow row;
  row.set_exit_code(code);
  row.set_error(console.error);
  row.set_output(console.output);
  if (console.planned) {
    row.set_nodes(console.num_nodes);
    row.set_ipus(console.num_ipus);
    row.set_fits(console.fits);
    row.set_bottleneck_s(console.bottleneck_s);
    row.set_assumed(console.assumed);
    row.set_shapes(console.shapes);
  }
  const bool sent = WriteAll(
      kAnswerFd, Frame(row.SerializeAsString()) + Frame(out) + Frame(err));
  ::close(kAnswerFd);
  return sent;
}

// This process's arguments, argv[0] first (NUL-separated in
// /proc/self/cmdline).
std::vector<std::string> OwnArguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string arg; std::getline(in, arg, '\0');) args.push_back(arg);
  return args;
}

// Starts autoshard again with this process's arguments and `request` in
// AUTOSHARD_BATCH_CHILD; `answer_fd` becomes its fd 3 and `lock_fd` its fd
// 4. Returns the child's pid, or -1 with errno set.
pid_t SpawnChild(const std::string& request, int answer_fd, int lock_fd) {
  std::vector<std::string> args = OwnArguments();
  std::vector<std::string> env_strings = {
      absl::StrCat(kChildEnv, "=", absl::Base64Escape(request))};
  for (char** e = environ; *e != nullptr; ++e) {
    if (!absl::StartsWith(*e, absl::StrCat(kChildEnv, "="))) {
      env_strings.emplace_back(*e);
    }
  }
  auto pointers = [](std::vector<std::string>& strings) {
    std::vector<char*> p;
    for (std::string& s : strings) p.push_back(s.data());
    p.push_back(nullptr);
    return p;
  };
  std::vector<char*> argv = pointers(args), envp = pointers(env_strings);
  // Copies at fds >= 10 first, so that the dup2s onto 3 and 4 cannot
  // overwrite one source with the other.
  const int answer_copy = ::fcntl(answer_fd, F_DUPFD_CLOEXEC, 10);
  const int lock_copy =
      lock_fd < 0 ? -1 : ::fcntl(lock_fd, F_DUPFD_CLOEXEC, 10);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, answer_copy, kAnswerFd);
  if (lock_copy >= 0) {
    posix_spawn_file_actions_adddup2(&actions, lock_copy, kLockFd);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int error = answer_copy < 0
                        ? errno
                        : ::posix_spawn(&pid, "/proc/self/exe", &actions, &attr,
                                        argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (answer_copy >= 0) ::close(answer_copy);
  if (lock_copy >= 0) ::close(lock_copy);
  if (error != 0) {
    errno = error;
    return -1;
  }
  return pid;
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? absl::StrCat("SIG", abbrev)
                           : absl::StrCat("signal ", sig);
}

}  // namespace

std::mutex& PrintMutex() {
  static std::mutex mutex;
  return mutex;
}

void ChildProcesses::Add(pid_t pid) {
  std::lock_guard<std::mutex> lock(mutex_);
  pids_.insert(pid);
  if (stopping_) ::kill(pid, signal_);
}

void ChildProcesses::Remove(pid_t pid) {
  std::lock_guard<std::mutex> lock(mutex_);
  pids_.erase(pid);
}

void ChildProcesses::SignalAndWait(int sig) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    signal_ = sig;
    for (pid_t pid : pids_) ::kill(pid, sig);
  }
  // The workers reap their children and Remove them.
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (pids_.empty()) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

ProcessWriteLock::ProcessWriteLock() {
  fd_ = memfd_create("autoshard-write-lock", MFD_CLOEXEC);
}

ProcessWriteLock& ProcessWriteLock::Inherited() {
  static ProcessWriteLock* lock = new ProcessWriteLock(kLockFd);
  return *lock;
}

ProcessWriteLock::~ProcessWriteLock() {
  if (fd_ >= 0) ::close(fd_);
}

void ProcessWriteLock::lock() {
  struct flock l = {};
  l.l_type = F_WRLCK;
  l.l_whence = SEEK_SET;
  while (fd_ >= 0 && ::fcntl(fd_, F_SETLKW, &l) != 0 && errno == EINTR) {
  }
}

void ProcessWriteLock::unlock() {
  struct flock l = {};
  l.l_type = F_UNLCK;
  l.l_whence = SEEK_SET;
  if (fd_ >= 0) ::fcntl(fd_, F_SETLK, &l);
}

int ShardInChild(const std::string& model, const std::string& stem,
                 ProcessWriteLock* write_lock, ChildProcesses* children) {
  Console& console = CurrentConsole();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return ReportError(absl::InternalError(
        absl::StrCat("cannot make a pipe: ", strerror(errno))));
  }
  proto::BatchRow request;
  request.set_model(model);
  // An empty stem (a batch without --out-dir): nothing is written.
  if (!stem.empty()) request.set_output(absl::StrCat(stem, kModelSuffix));
  const pid_t pid =
      SpawnChild(request.SerializeAsString(), fds[1], write_lock->fd());
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    return ReportError(absl::InternalError(
        absl::StrCat("cannot start a process: ", strerror(errno))));
  }
  children->Add(pid);
  const std::string answer = ReadAll(fds[0]);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  children->Remove(pid);
  std::string row_bytes, out, err;
  size_t at = 0;
  proto::BatchRow row;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
      Unframe(answer, &at, &row_bytes) && Unframe(answer, &at, &out) &&
      Unframe(answer, &at, &err) && row.ParseFromString(row_bytes)) {
    *console.out << out;
    *console.err << err;
    console.error = row.error();
    console.output = row.output();
    console.planned = row.ipus() > 0;
    console.num_nodes = row.nodes();
    console.num_ipus = row.ipus();
    console.fits = row.fits();
    console.bottleneck_s = row.bottleneck_s();
    console.assumed = row.assumed();
    console.shapes = row.shapes();
    return row.exit_code();
  }
  const std::string how =
      WIFSIGNALED(status)
          ? absl::StrCat("crashed (", SignalName(WTERMSIG(status)), ")")
          : absl::StrCat("ended without an answer (exit ",
                         WIFEXITED(status) ? WEXITSTATUS(status) : -1, ")");
  return ReportError(absl::InternalError(absl::StrCat(
      console.label, ": ", how,
      " while sharding it: a bug in autoshard or a library it calls; the "
      "other models go on")));
}

bool InBatchChild() { return std::getenv(kChildEnv) != nullptr; }

std::optional<int> ServeAsBatchChild(const ShardOptions& batch) {
  const char* value = ::getenv(kChildEnv);
  if (value == nullptr) return std::nullopt;
  std::string bytes;
  proto::BatchRow request;
  const bool understood =
      absl::Base64Unescape(value, &bytes) && request.ParseFromString(bytes);
  // Neither the variable nor the two fds are for the compile commands it
  // starts: one left running would hold the answer pipe open.
  ::unsetenv(kChildEnv);
  ::fcntl(kAnswerFd, F_SETFD, FD_CLOEXEC);
  ::fcntl(kLockFd, F_SETFD, FD_CLOEXEC);
  if (!understood) {
    return ReportError(absl::InternalError(
        absl::StrCat(kChildEnv, ": not a request from autoshard")));
  }
  Console& console = CurrentConsole();
  std::ostringstream out, err;
  console.out = &out;
  console.err = &err;
  console.show_progress = false;
  console.label = request.model();
  console.write_lock = &ProcessWriteLock::Inherited();
  ShardOptions one = batch;
  one.model.library.jobs = 1;  // models, not compiles, run at once
  one.model.model = request.model();
  const std::string stem(absl::StripSuffix(request.output(), kModelSuffix));
  one.output = request.output();
  if (!stem.empty()) {
    one.sharding_config = stem + ".sharding.yaml";
    one.model.plan_path = stem + ".plan.json";
  }
  int code = kExitInternal;
  {
    CreatedFolders model_folders;
    if (!stem.empty())
      model_folders.Make(std::filesystem::path(stem).parent_path());
    try {
      code = ShardOneModel(one);
    } catch (const std::exception& e) {
      code = ReportError(absl::InternalError(
          absl::StrCat(request.model(), ": internal error: ", e.what())));
    }
  }
  return SendAnswer(code, console, out.str(), err.str()) ? kExitOk
                                                         : kExitInternal;
}

}  // namespace autoshard::cmd
