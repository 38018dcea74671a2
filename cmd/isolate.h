// Batch mode's containment: each model runs in a child process, so that a
// crash in third-party code (ONNX's shape inference, protobuf, yaml-cpp)
// becomes that model's row instead of ending the batch.
//
// Note [One child process per batch model]
// - The child is autoshard itself, started with posix_spawn from the worker
//   thread that would have run the model: /proc/self/exe with the parent's
//   own arguments (/proc/self/cmdline), so it parses the same options, and
//   AUTOSHARD_BATCH_CHILD in its environment naming the one model and its
//   output stem. Such a process runs only that model (ServeAsBatchChild)
//   and sends back its exit code, its summary figures and its stdout and
//   stderr text through a pipe (fd 3).
// - Why not fork() and run the model in the forked child: the parent has
//   several threads, and after fork only async-signal-safe calls are safe in
//   the child. A lock another thread held at the fork (malloc's, ASan's
//   allocator's, protobuf's, iostream's) stays locked for ever there: under
//   ASan, `shard a/m.onnx b/m.onnx -n 2 --jobs 2` hung that way.
// - A child that dies from a signal (SIGSEGV, SIGFPE, SIGABRT, a stack
//   overflow) or sends an incomplete answer is the model's failure: exit 1
//   and a one-line reason. Outputs are written with temporary names and
//   renamed, so such a child leaves no partial output.
// - Termination signals: the child starts with none blocked (the parent
//   blocks them for its signal thread) and defers them only while it writes
//   its outputs (DeferTerminationSignals), so Ctrl-C (sent to the whole
//   process group) ends each child after its write in progress. A signal
//   sent to the parent alone is forwarded to every live child, and the
//   parent waits for them before it ends (ChildProcesses).
// - Models with external data write one at a time across children:
//   ProcessWriteLock is an fcntl lock on a file the children inherit (fd 4),
//   which the kernel releases when a child dies holding it.
#ifndef AUTOSHARD_CMD_ISOLATE_H_
#define AUTOSHARD_CMD_ISOLATE_H_

#include <sys/types.h>

#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace autoshard::cmd {

struct ShardOptions;

// The live children of a batch, for forwarding a termination signal.
class ChildProcesses {
 public:
  void Add(pid_t pid);
  void Remove(pid_t pid);
  // Sends `sig` to every live child and returns once none is left.
  void SignalAndWait(int sig);

 private:
  std::mutex mutex_;
  std::set<pid_t> pids_;
  bool stopping_ = false;  // set by SignalAndWait: later children get sig too
  int signal_ = 0;
};

// A lock held across processes (BasicLockable, for std::unique_lock): an
// fcntl write lock on an anonymous file made by the constructor. Separate
// processes exclude each other; threads of one process do not.
class ProcessWriteLock {
 public:
  ProcessWriteLock();
  ~ProcessWriteLock();
  ProcessWriteLock(const ProcessWriteLock&) = delete;
  ProcessWriteLock& operator=(const ProcessWriteLock&) = delete;
  void lock();
  void unlock();
  // The parent's lock in a batch child (fd 4, Note [One child process per
  // batch model]).
  static ProcessWriteLock& Inherited();
  int fd() const { return fd_; }

 private:
  explicit ProcessWriteLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Held by a thread printing on stdout or stderr while others print too.
std::mutex& PrintMutex();

// Runs the batch model `model` (its outputs STEM.sharded.onnx,
// STEM.sharding.yaml, STEM.plan.json) in a child process (Note [One child
// process per batch model]), models with external data writing under
// `write_lock`, and returns its exit code; the calling thread's Console gets
// the child's text and figures as if the model had run here. A child killed
// by a signal is reported through ReportError as "crashed (SIG...)" and
// returns exit 1.
int ShardInChild(const std::string& model, const std::string& stem,
                 ProcessWriteLock* write_lock, ChildProcesses* children);

// In a batch's child process (AUTOSHARD_BATCH_CHILD set by ShardInChild):
// shards the model it names with the batch's options (one compile at a
// time), sends the answer to the parent and returns the process's exit code.
// std::nullopt in any other process.
std::optional<int> ServeAsBatchChild(const ShardOptions& batch);
// True in a batch's child process (AUTOSHARD_BATCH_CHILD set).
bool InBatchChild();

}  // namespace autoshard::cmd

#endif  // AUTOSHARD_CMD_ISOLATE_H_
