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

}  // namespace autoshard::cmd

#endif  // AUTOSHARD_CMD_PROGRESS_H_
