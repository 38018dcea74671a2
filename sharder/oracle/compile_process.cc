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
#include "base/status_macros.h"

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

// Why waiting for a command ended early: not, its deadline, or a
// termination signal (Note [A compile never outlives its limit or a signal]).
enum class Stop { kNone, kDeadline, kSignal };

Stop StopAt(std::chrono::steady_clock::time_point now,
            std::chrono::steady_clock::time_point deadline) {
  if (now >= deadline) return Stop::kDeadline;
  if (TerminationPending()) return Stop::kSignal;
  return Stop::kNone;
}

// Starts `command` under /bin/sh -c in a process group of its own, its
// stdout and stderr into a pipe: `*pid` and the pipe's read end `*output_fd`.
absl::Status StartShell(const std::string& command, pid_t* pid,
                        int* output_fd) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot make a pipe: ", std::strerror(errno)));
  }
  *pid = ::fork();
  if (*pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return absl::InternalError(absl::StrCat(
        "cannot start the compile command: ", std::strerror(errno)));
  }
  if (*pid == 0) {
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
  ::setpgid(*pid, *pid);  // also here: whichever runs first
  ::close(fds[1]);
  *output_fd = fds[0];
  return absl::OkStatus();
}

// Appends what the command writes to `fd` to `*output` until it ends (or
// cannot be read), polling every 100 ms for the deadline and a signal.
Stop ReadOutput(int fd, std::chrono::steady_clock::time_point deadline,
                std::string* output) {
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (const Stop stop = StopAt(now, deadline); stop != Stop::kNone) {
      return stop;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    pollfd p = {fd, POLLIN, 0};
    const int ready = ::poll(
        &p, 1, static_cast<int>(std::min<int64_t>(left.count() + 1, 100)));
    if (ready < 0 && errno != EINTR) return Stop::kNone;
    if (ready <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Stop::kNone;  // end of output: the command is done
    output->append(buffer, static_cast<size_t>(n));
  }
}

// Waits for the shell `pid` to exit within the same limits, every 10 ms;
// `*reaped` when it was (its status in `*wait_status`).
Stop WaitForShell(pid_t pid, std::chrono::steady_clock::time_point deadline,
                  int* wait_status, bool* reaped) {
  for (;;) {
    const pid_t done = ::waitpid(pid, wait_status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) {
      *reaped = done == pid;
      return Stop::kNone;
    }
    const Stop stop = StopAt(std::chrono::steady_clock::now(), deadline);
    if (stop != Stop::kNone) return stop;
    ::usleep(10 * 1000);
  }
}

}  // namespace

void TerminationSignals(sigset_t* set) {
  sigemptyset(set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(set, sig);
}

absl::StatusOr<CommandResult> RunShellCommand(
    const std::string& command,
    std::chrono::steady_clock::time_point deadline) {
  pid_t pid = 0;
  int output_fd = -1;
  RETURN_IF_ERROR(StartShell(command, &pid, &output_fd));
  CommandResult result;
  Stop stop = ReadOutput(output_fd, deadline, &result.output);
  ::close(output_fd);
  // The output ended: wait for the shell itself, within the same limits.
  bool reaped = false;
  if (stop == Stop::kNone) {
    stop = WaitForShell(pid, deadline, &result.wait_status, &reaped);
  }
  // The whole group: a shell's background children too.
  ::kill(-pid, SIGKILL);
  while (!reaped && ::waitpid(pid, &result.wait_status, 0) < 0 &&
         errno == EINTR) {
  }
  if (stop == Stop::kSignal) {
    return absl::CancelledError("the compile was stopped by a signal");
  }
  result.timed_out = stop == Stop::kDeadline;
  return result;
}

}  // namespace autoshard
