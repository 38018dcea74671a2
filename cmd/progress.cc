#include "cmd/progress.h"

#include <signal.h>
#include <unistd.h>

#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "writers/emit.h"

namespace autoshard::cmd {

bool StderrIsTerminal() { return ::isatty(STDERR_FILENO) != 0; }

ProgressLine::ProgressLine(std::ostream* err, bool terminal)
    : err_(err), terminal_(terminal), last_(std::chrono::steady_clock::now()) {}

void ProgressLine::Update(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (terminal_) {
    *err_ << "\r" << text
          << std::string(width_ > text.size() ? width_ - text.size() : 0, ' ')
          << std::flush;
    width_ = text.size();
    shown_ = true;
    return;
  }
  if (std::chrono::duration<double>(now - last_).count() < kPlainLineSeconds)
    return;
  last_ = now;
  *err_ << "autoshard: " << text << "\n" << std::flush;
}

void ProgressLine::Done() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (shown_) *err_ << "\n" << std::flush;
  shown_ = false;
}

std::string SearchProgressText(int64_t candidates, int64_t max_candidates,
                               double seconds, double max_seconds,
                               int64_t best_max_tile_bytes, int num_ipus) {
  return absl::StrCat(
      "search: ", candidates, " of ", max_candidates, " candidates, ",
      HumanSeconds(seconds), " of ", HumanSeconds(max_seconds),
      ", closest fullest tile ",
      best_max_tile_bytes == INT64_MAX
          ? std::string("unknown")
          : HumanBytesText(static_cast<double>(best_max_tile_bytes)),
      num_ipus > 0 ? absl::StrCat("; trying ", num_ipus, " IPUs") : "");
}

namespace {

volatile sig_atomic_t outputs_written = 0;

// Async-signal-safe: write(2) of fixed strings, then the default action.
extern "C" void OnInterrupt(int sig) {
  const char* name = sig == SIGINT    ? "SIGINT"
                     : sig == SIGTERM ? "SIGTERM"
                     : sig == SIGHUP  ? "SIGHUP"
                                      : "SIGQUIT";
  const char* what = outputs_written
                         ? " after the outputs were written\n"
                         : ": nothing written, every file as it was\n";
  for (const char* part : {"\nautoshard: interrupted (", name, ")", what}) {
    const ssize_t ignored = ::write(STDERR_FILENO, part, std::strlen(part));
    (void)ignored;
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void InstallInterruptLine() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    struct sigaction current;
    // A signal the caller ignores (nohup's SIGHUP) stays ignored.
    if (sigaction(sig, nullptr, &current) == 0 &&
        current.sa_handler == SIG_IGN) {
      continue;
    }
    struct sigaction on = {};
    on.sa_handler = OnInterrupt;
    sigemptyset(&on.sa_mask);
    sigaction(sig, &on, nullptr);
  }
}

void MarkOutputsWritten() { outputs_written = 1; }

}  // namespace autoshard::cmd
