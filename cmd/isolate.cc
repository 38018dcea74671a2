#include "cmd/isolate.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cmd/commands.h"
#include "proto/batch.pb.h"

namespace autoshard::cmd {
namespace {

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

// In the child: runs `run` with fresh buffers and writes the answer to `fd`.
[[noreturn]] void RunChild(const std::function<int()>& run, int fd) {
  sigset_t none;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, nullptr);
  Console& console = CurrentConsole();
  std::ostringstream out, err;
  console.out = &out;
  console.err = &err;
  const int code = run();
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
  }
  const bool sent = WriteAll(
      fd, Frame(row.SerializeAsString()) + Frame(out.str()) + Frame(err.str()));
  ::_exit(sent ? 0 : kExitInternal);
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? absl::StrCat("SIG", abbrev)
                           : absl::StrCat("signal ", sig);
}

}  // namespace

std::mutex& ForkMutex() {
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

int RunInChild(const std::function<int()>& run, ChildProcesses* children) {
  Console& console = CurrentConsole();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return ReportError(absl::InternalError(
        absl::StrCat("cannot make a pipe: ", strerror(errno))));
  }
  pid_t pid = -1;
  {
    std::lock_guard<std::mutex> no_printing(ForkMutex());
    pid = ::fork();
  }
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return ReportError(absl::InternalError(
        absl::StrCat("cannot start a process: ", strerror(errno))));
  }
  if (pid == 0) {
    ::close(fds[0]);
    RunChild(run, fds[1]);
  }
  children->Add(pid);
  ::close(fds[1]);
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

}  // namespace autoshard::cmd
