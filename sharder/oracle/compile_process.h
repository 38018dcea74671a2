// Runs one compile command with a time limit (--compile-timeout), in a
// process group of its own that is killed as a whole when the limit passes
// or a termination signal arrives.
//
// Note [A compile never outlives its limit or a signal]
// The caller (CompileOracle::Compile) blocks SIGINT, SIGTERM, SIGHUP and
// SIGQUIT in its threads while candidates compile; RunShellCommand polls the
// command's output and, every 100 ms, whether one of those signals is
// pending or the deadline passed. Either way the command's process group
// (the shell and whatever it started) gets SIGKILL, and the caller removes
// its temporary folder before it unblocks the signals, which then end the
// process with their default action. So a hung compiler costs at most its
// limit, and Ctrl-C or kill leaves no temporary folder behind.
#ifndef AUTOSHARD_SHARDER_ORACLE_COMPILE_PROCESS_H_
#define AUTOSHARD_SHARDER_ORACLE_COMPILE_PROCESS_H_

#include <chrono>
#include <string>

#include "absl/status/statusor.h"

namespace autoshard {

struct CommandResult {
  int wait_status = 0;     // as waitpid gives it
  bool timed_out = false;  // killed at the deadline
  std::string output;      // stdout and stderr, interleaved
};

// Runs `command` with /bin/sh -c until it exits or `deadline` passes.
// Errors: Cancelled when a termination signal is pending (the command was
// killed); Internal when no process can be started.
absl::StatusOr<CommandResult> RunShellCommand(
    const std::string& command, std::chrono::steady_clock::time_point deadline);

// The termination signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT).
void TerminationSignals(sigset_t* set);

}  // namespace autoshard

#endif  // AUTOSHARD_SHARDER_ORACLE_COMPILE_PROCESS_H_
