// Deadlines on the steady clock from seconds given as a double (the
// budgets' unit: --max-search-seconds, --bound-seconds, kIdealMovesSeconds):
// one spelling of the duration_cast the solvers each wrote out. Here, the
// lowest layer, so that every folder can use it.
#ifndef AUTOSHARD_BASE_DEADLINE_H_
#define AUTOSHARD_BASE_DEADLINE_H_

#include <chrono>

namespace autoshard {

// `from` + `seconds` (a finite number of seconds; negative gives a time
// point before `from`, already passed when `from` is now).
inline std::chrono::steady_clock::time_point SecondsAfter(
    std::chrono::steady_clock::time_point from, double seconds) {
  return from + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(seconds));
}

}  // namespace autoshard

#endif  // AUTOSHARD_BASE_DEADLINE_H_
