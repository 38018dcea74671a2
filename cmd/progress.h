// Progress on stderr (issue 16, point 6): on a terminal one line rewritten
// in place; otherwise (a log, a CI job) a plain line at most every
// kPlainLineSeconds, so logs are not flooded with carriage returns.
#ifndef AUTOSHARD_CMD_PROGRESS_H_
#define AUTOSHARD_CMD_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>

namespace autoshard::cmd {

// Seconds between plain progress lines when stderr is not a terminal.
inline constexpr double kPlainLineSeconds = 5;

// True when stderr is a terminal.
bool StderrIsTerminal();

class ProgressLine {
 public:
  // Writes to `err`; `terminal` picks the in-place line.
  ProgressLine(std::ostream* err, bool terminal);
  // Shows `text` (without a newline): at once on a terminal, else when
  // kPlainLineSeconds have passed since the last line printed (or since
  // construction: a short run prints none). Thread-safe.
  void Update(const std::string& text);
  // Ends the in-place line (a newline) if one is shown.
  void Done();
  ~ProgressLine() { Done(); }

 private:
  std::ostream* err_;
  bool terminal_;
  bool shown_ = false;  // an in-place line waits for its newline
  std::chrono::steady_clock::time_point last_;
  size_t width_ = 0;  // of the line shown, to blank its rest
  std::mutex mutex_;
};

// The search's progress in the report's units: "search: 1234 of 100000
// candidates, 12.0 s of 60 s, closest fullest tile 540.12 kB" and, under
// --num-ipus auto (num_ipus > 0), "; trying 4 IPUs".
std::string SearchProgressText(int64_t candidates, int64_t max_candidates,
                               double seconds, double max_seconds,
                               int64_t best_max_tile_bytes, int num_ipus);

// Ctrl-C (SIGINT), SIGTERM, SIGHUP and SIGQUIT in a run of one model: one
// line on stderr saying what was left as it was ("autoshard: interrupted
// (SIGINT): nothing written, every file as it was", or "... after the
// outputs were written" once MarkOutputsWritten ran), after a newline that
// ends an in-place progress line; then the signal's default action (exit
// status 128 + the signal). Outputs are written with these signals deferred
// (DeferTerminationSignals), so no file is ever half-written. Not for a
// batch (cmd/batch.cc stops its models and exits itself) or its children.
void InstallInterruptLine();
// The run's outputs are written: an interrupt from now on says so.
void MarkOutputsWritten();

}  // namespace autoshard::cmd

#endif  // AUTOSHARD_CMD_PROGRESS_H_
