// Batch mode's containment: each model runs in a child process, so that a
// crash in third-party code (ONNX's shape inference, protobuf, yaml-cpp)
// becomes that model's row instead of ending the batch.
//
// Note [One child process per batch model]
// - The child is forked from the worker thread that would have run the
//   model, runs it with the thread's options and a Console of its own, and
//   sends back its exit code, its summary figures and its stdout and stderr
//   text through a pipe, then leaves with _exit (the parent's other threads
//   do not exist in the child, so no destructor may wait for them).
// - A child that dies from a signal (SIGSEGV, SIGFPE, SIGABRT, a stack
//   overflow) or sends an incomplete answer is the model's failure: exit 1
//   and a one-line reason. Outputs are written with temporary names and
//   renamed, so such a child leaves no partial output.
// - Termination signals: the child runs with them unblocked, deferred only
//   while it writes its outputs (DeferTerminationSignals), so Ctrl-C (sent
//   to the whole process group) ends each child after its write in
//   progress. A signal sent to the parent alone is forwarded to every live
//   child, and the parent waits for them before it ends (ChildProcesses).
// - Models with external data write one at a time across children:
//   ProcessWriteLock is an fcntl lock, which the kernel releases when a
//   child dies holding it.
#ifndef AUTOSHARD_CMD_ISOLATE_H_
#define AUTOSHARD_CMD_ISOLATE_H_

#include <sys/types.h>

#include <functional>
#include <mutex>
#include <set>

namespace autoshard::cmd {

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

 private:
  int fd_ = -1;
};

// Held around fork() by RunInChild, and by a thread printing on stdout or
// stderr meanwhile: a stdio lock held by another thread at the fork would
// stay locked for ever in the child.
std::mutex& ForkMutex();

// Runs `run` in a child process (Note [One child process per batch model])
// and returns its exit code; the calling thread's Console gets the child's
// text and figures as if `run` had run here. A child killed by a signal is
// reported through ReportError as "crashed (SIG...)" and returns exit 1.
int RunInChild(const std::function<int()>& run, ChildProcesses* children);

}  // namespace autoshard::cmd

#endif  // AUTOSHARD_CMD_ISOLATE_H_
