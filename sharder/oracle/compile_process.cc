#include "sharder/oracle/compile_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace autoshard {
namespace {

bool TerminationPending() {
  sigset_t pending, wanted;
  sigpending(&pending);
  TerminationSignals(&wanted);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    if (sigismember(&wanted, sig) && sigismember(&pending, sig)) return true;
  }
  return false;
}

}  // namespace

void TerminationSignals(sigset_t* set) {
  sigemptyset(set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(set, sig);
}

absl::StatusOr<CommandResult> RunShellCommand(
    const std::string& command,
    std::chrono::steady_clock::time_point deadline) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot make a pipe: ", std::strerror(errno)));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return absl::InternalError(absl::StrCat(
        "cannot start the compile command: ", std::strerror(errno)));
  }
  if (pid == 0) {
    // The child: its own process group, signals as the user sent them.
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, nullptr);
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::execl("/bin/sh", "sh", "-c", command.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: whichever runs first
  ::close(fds[1]);
  CommandResult result;
  bool cancelled = false;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      result.timed_out = true;
      break;
    }
    if (TerminationPending()) {
      cancelled = true;
      break;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    pollfd p = {fds[0], POLLIN, 0};
    const int ready = ::poll(
        &p, 1, static_cast<int>(std::min<int64_t>(left.count() + 1, 100)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of output: the command is done
    result.output.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  // The output ended: wait for the shell itself, within the same limits.
  bool reaped = false;
  while (!result.timed_out && !cancelled) {
    const pid_t done = ::waitpid(pid, &result.wait_status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) {
      reaped = done == pid;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      result.timed_out = true;
    } else if (TerminationPending()) {
      cancelled = true;
    } else {
      ::usleep(10 * 1000);
    }
  }
  // The whole group: a shell's background children too.
  ::kill(-pid, SIGKILL);
  while (!reaped && ::waitpid(pid, &result.wait_status, 0) < 0 &&
         errno == EINTR) {
  }
  if (cancelled) {
    return absl::CancelledError("the compile was stopped by a signal");
  }
  return result;
}

}  // namespace autoshard
