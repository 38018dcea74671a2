#include "cmd/progress.h"

#include <unistd.h>

#include <climits>

#include "absl/strings/str_cat.h"
#include "sharder/outputs/emit.h"

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

}  // namespace autoshard::cmd
