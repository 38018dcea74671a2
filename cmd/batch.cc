// Batch mode of `autoshard shard`: several models or folders, each sharded by
// ShardOneModel (so every flag of a single run applies), at most --jobs at
// once, into --out-dir, with one summary row per model.
//
// Note [Batch outputs and failures]
// - Names: a model found in folder D is named by its path relative to D, a
//   model given as a file by its file name. Models whose names (without the
//   extension) clash are named by their paths relative to their common
//   folder instead, repeated until no two clash; each model writes
//   DIR/<name>.sharded.onnx, .sharding.yaml and .plan.json.
// - Each model runs with its own Console: its report, warnings and errors
//   are buffered and printed, in command-line order, with its row.
// - Each model runs in a process of its own (Note [One child process per
//   batch model]): a crash becomes its row (exit 1), the others go on.
// - A model that fails leaves nothing of its own behind (WriteOutputs) and
//   touches no other model's files: outputs are distinct, models with
//   external data write one at a time (two may hard-link the same data file),
//   and a termination signal waits for the write in progress (OutputWriteLock)
//   before it ends the process.
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/output_guard.h"
#include "base/plural.h"
#include "cmd/batch_warnings.h"
#include "cmd/commands.h"
#include "cmd/isolate.h"
#include "cmd/progress.h"
#include "graph/model_io.h"
#include "proto/batch.pb.h"
#include "writers/csv.h"
#include "writers/emit.h"

namespace autoshard::cmd {
namespace fs = std::filesystem;
namespace {

// One model of the batch.
struct BatchModel {
  std::string path;    // as given, or as found below a folder
  fs::path absolute;   // lexically normal absolute path, for naming
  fs::path name;       // its name below --out-dir (the extension is dropped)
  absl::Status error;  // set when the model cannot even be tried
};

bool IsInside(const fs::path& path, const fs::path& dir) {
  auto [d, p] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return d == dir.end();
}

fs::path NormalAbsolute(const fs::path& p) {
  std::error_code ec;
  return fs::absolute(p, ec).lexically_normal();
}

// The models named on the command line, folders expanded (sorted by path),
// each file once.
std::vector<BatchModel> CollectModels(const std::vector<std::string>& args,
                                      const fs::path& out_dir) {
  std::vector<BatchModel> models;
  std::error_code ec;
  const fs::path out_canonical = fs::weakly_canonical(out_dir, ec);
  std::vector<fs::path> seen;  // canonical paths
  auto add = [&](BatchModel m) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(m.absolute, ec);
    if (std::find(seen.begin(), seen.end(), canonical) != seen.end()) return;
    seen.push_back(canonical);
    models.push_back(std::move(m));
  };
  for (const std::string& arg : args) {
    if (!fs::is_directory(arg, ec)) {
      add({arg, NormalAbsolute(arg), fs::path(arg).filename(), {}});
      continue;
    }
    std::vector<std::string> found;
    fs::recursive_directory_iterator it(
        arg, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const fs::path& p = it->path();
      if (it->is_directory(ec) &&
          fs::weakly_canonical(p, ec) == out_canonical) {
        it.disable_recursion_pending();  // earlier outputs are not inputs
        continue;
      }
      const std::string file = p.filename().string();
      if (p.extension() == ".onnx" && it->is_regular_file(ec) &&
          !absl::EndsWith(file, ".sharded.onnx")) {
        found.push_back(p.string());
      }
    }
    if (ec) {
      add({arg, NormalAbsolute(arg), fs::path(arg).filename(),
           absl::InvalidArgumentError(
               absl::StrCat(arg, ": cannot list the folder: ", ec.message()))});
      ec.clear();
      continue;
    }
    if (found.empty()) {
      add({arg, NormalAbsolute(arg), fs::path(arg).filename(),
           absl::InvalidArgumentError(
               absl::StrCat(arg, ": no .onnx model below this folder"))});
      continue;
    }
    std::sort(found.begin(), found.end());
    for (const std::string& f : found) {
      add({f, NormalAbsolute(f), fs::path(f).lexically_relative(arg), {}});
    }
  }
  return models;
}

fs::path WithoutExtension(const fs::path& name) {
  return name.parent_path() / name.stem();
}

// Note [Batch outputs and failures]: names that clash become paths relative
// to the clashing models' common folder, until none clash. Each round makes
// every clashing name strictly longer, so it ends (at worst with absolute
// paths, which differ).
void NameOutputs(std::vector<BatchModel>* models) {
  for (bool clash = true; clash;) {
    clash = false;
    std::map<fs::path, std::vector<BatchModel*>> by_name;
    for (BatchModel& m : *models) {
      by_name[WithoutExtension(m.name)].push_back(&m);
    }
    for (auto& [name, group] : by_name) {
      if (group.size() < 2) continue;
      clash = true;
      fs::path common = group[0]->absolute.parent_path();
      for (const BatchModel* m : group) {
        while (!IsInside(m->absolute, common)) common = common.parent_path();
      }
      bool progress = false;
      for (BatchModel* m : group) {
        const fs::path relative = m->absolute.lexically_relative(common);
        progress |= relative != m->name;
        m->name = relative;
      }
      if (!progress) {
        // The names differ only in their extensions (model.onnx, model.bak):
        // keep the extension in the stem, model_onnx.onnx, model_bak.bak.
        for (BatchModel* m : group) {
          std::string file = m->name.filename().string();
          std::replace(file.begin(), file.end(), '.', '_');
          m->name =
              m->name.parent_path() / (file + m->name.extension().string());
        }
      }
    }
  }
}

// How serious an exit code is: 1 (internal) before 2 (bad input) before 3
// (does not fit) before 0.
int Severity(int code) {
  switch (code) {
    case kExitOk:
      return 0;
    case kExitNoFit:
      return 1;
    case kExitBadInput:
      return 2;
    default:
      return 3;
  }
}

std::string SummaryCsv(const proto::BatchSummary& summary) {
  std::string out =
      "model,output,nodes,ipus,fits,bottleneck_s,seconds,exit_code,error,"
      "assumed,shapes\n";
  for (const proto::BatchRow& r : summary.models()) {
    const bool planned = r.ipus() > 0;
    absl::StrAppend(&out, CsvField(r.model()), ",", CsvField(r.output()), ",",
                    planned ? absl::StrCat(r.nodes()) : "", ",",
                    planned ? absl::StrCat(r.ipus()) : "", ",",
                    planned ? (r.fits() ? "true" : "false") : "", ",",
                    planned ? absl::StrFormat("%.6g", r.bottleneck_s()) : "",
                    ",", absl::StrFormat("%.3f", r.seconds()), ",",
                    r.exit_code(), ",", CsvField(r.error()), ",",
                    CsvField(r.assumed()), ",", CsvField(r.shapes()), "\n");
  }
  return out;
}

// The summary table on stdout: a header, then one row per model.
std::string TableHeader(size_t model_width) {
  return absl::StrFormat("%-*s %7s %4s %4s %-10s %12s %8s  %s\n", model_width,
                         "model", "nodes", "ipus", "fits", "shapes",
                         "bottleneck", "seconds", "error");
}

std::string TableRow(const proto::BatchRow& r, size_t model_width) {
  const bool planned = r.ipus() > 0;
  std::string error = r.error();
  if (const size_t eol = error.find('\n'); eol != std::string::npos) {
    error = error.substr(0, eol) + " ...";
  }
  return absl::StrFormat("%-*s %7s %4s %4s %-10s %12s %8.2f  %s\n", model_width,
                         r.model(), planned ? absl::StrCat(r.nodes()) : "-",
                         planned ? absl::StrCat(r.ipus()) : "-",
                         planned ? (r.fits() ? "yes" : "no") : "-",
                         planned && !r.shapes().empty() ? r.shapes() : "-",
                         planned ? HumanSeconds(r.bottleneck_s()) : "-",
                         r.seconds(), error);
}

// Batch mode's handling of SIGINT, SIGTERM, SIGHUP and SIGQUIT: every thread
// blocks them (threads started later inherit that); this thread waits for
// one, forwards it to the models' processes and waits for them (each ends
// after its output write in progress), then ends the process with the
// signal's default action. Stop() ends the thread when the batch is done.
class SignalThread {
 public:
  explicit SignalThread(ChildProcesses* children) : children_(children) {
    sigemptyset(&set_);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
      // A signal the caller ignores (nohup's SIGHUP) stays ignored: blocked,
      // it would be queued and then delivered here.
      struct sigaction current;
      if (sigaction(sig, nullptr, &current) == 0 &&
          current.sa_handler == SIG_IGN) {
        continue;
      }
      sigaddset(&set_, sig);
    }
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    thread_ = std::thread([this] { Run(); });
  }
  ~SignalThread() { Stop(); }
  // True once a signal came: start no more models.
  bool stopping() const { return stopping_.load(); }
  void Stop() {
    if (!thread_.joinable()) return;
    done_ = true;
    thread_.join();
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);  // pending ones arrive now
  }

 private:
  void Run() {
    const timespec tick = {0, 100 * 1000 * 1000};
    while (!done_.load()) {
      const int sig = sigtimedwait(&set_, nullptr, &tick);
      if (sig <= 0) continue;
      stopping_ = true;
      children_->SignalAndWait(sig);
      OutputWriteLock().lock();  // no write is in progress from here on
      signal(sig, SIG_DFL);
      sigset_t one;
      sigemptyset(&one);
      sigaddset(&one, sig);
      pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
      raise(sig);
    }
  }

  ChildProcesses* children_;
  sigset_t set_, old_;
  std::atomic<bool> done_{false};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// The batch's flags checked once, so bad ones are one error, not one per
// model (every model runs with these options).
absl::Status CheckBatchFlags(const ShardOptions& o) {
  if (o.out_dir.empty() &&
      (!o.output.empty() || !o.sharding_config.empty() ||
       !o.model.plan_path.empty() || !o.split_dir.empty())) {
    return absl::InvalidArgumentError(
        "several models (or a folder) write their files into --out-dir DIR "
        "(-o, --sharding-config, --plan and --split-dir name one model's "
        "files); without --out-dir only the summary rows are printed");
  }
  if (absl::StatusOr<Options> options = ShardLibraryOptions(o); !options.ok())
    return options.status();
  if (!o.summary_path.empty()) {
    const std::string ext = fs::path(o.summary_path).extension().string();
    if (ext != ".json" && ext != ".csv") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--summary ", o.summary_path, ": name a .json or a .csv file"));
    }
  }
  return absl::OkStatus();
}

// The models' files, by device and inode: an output that is one of them is
// refused.
class BatchInputs {
 public:
  explicit BatchInputs(const std::vector<BatchModel>& models) {
    for (const BatchModel& m : models) {
      struct stat st;
      if (::stat(m.path.c_str(), &st) == 0)
        inputs_[{st.st_dev, st.st_ino}] = m.path;
    }
  }
  // The model at `path`, or nullptr when it is none of them.
  const std::string* At(const std::string& path) const {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return nullptr;
    auto it = inputs_.find({st.st_dev, st.st_ino});
    return it == inputs_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::pair<dev_t, ino_t>, std::string> inputs_;  // file -> model
};

// DIR/<name> without the extension: the stem of a model's outputs.
// Empty without --out-dir: the batch writes no model files.
std::string OutputStem(const ShardOptions& o, const BatchModel& m) {
  if (o.out_dir.empty()) return "";
  return (fs::path(o.out_dir) / WithoutExtension(m.name)).string();
}

// No output may be an input: the summary stops the batch (the error
// returned), a model's own outputs fail that model (its `error`).
absl::Status CheckBatchOutputs(const ShardOptions& o,
                               std::vector<BatchModel>* models) {
  const BatchInputs inputs(*models);
  std::error_code ec;
  if (!o.summary_path.empty()) {
    if (const std::string* input = inputs.At(o.summary_path)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--summary ", o.summary_path, ": is an input (", *input,
                       "); refusing to overwrite it"));
    }
    const fs::path dir = fs::path(o.summary_path).parent_path();
    if (!dir.empty() && !fs::is_directory(dir, ec)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--summary ", o.summary_path, ": folder '", dir.string(),
                       "' does not exist"));
    }
  }
  for (BatchModel& m : *models) {
    if (o.out_dir.empty()) break;  // no model files written
    for (const char* ext : {".sharded.onnx", ".sharding.yaml", ".plan.json"}) {
      const std::string out = OutputStem(o, m) + ext;
      if (!o.summary_path.empty() &&
          NormalAbsolute(o.summary_path) == NormalAbsolute(out)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--summary ", o.summary_path, ": is also an output of ", m.path));
      }
      if (const std::string* input = inputs.At(out)) {
        m.error = absl::InvalidArgumentError(absl::StrCat(
            out, ": is an input (", *input, "); refusing to overwrite it"));
      }
    }
  }
  return absl::OkStatus();
}

// One model's run: its Console's text and its row.
struct BatchResult {
  std::ostringstream out, err;
  proto::BatchRow row;
  bool done = false;  // guarded by BatchRun::mutex
};

// What the models' runs share.
struct BatchRun {
  ShardOptions each;  // the options of every model; jobs 1
  std::vector<BatchModel> models;
  std::vector<BatchResult> results;
  std::mutex mutex;  // guards BatchResult::done
  std::condition_variable finished;
  ProcessWriteLock write_lock;
  ChildProcesses children;
};

// The summary row of a model's run that ended with `code`.
proto::BatchRow RowOf(const BatchModel& m, const Console& console, int code,
                      std::chrono::steady_clock::time_point start) {
  proto::BatchRow row;
  row.set_model(m.path);
  row.set_output(console.output);
  if (console.planned) {
    row.set_nodes(static_cast<int32_t>(console.num_nodes));
    row.set_ipus(console.num_ipus);
    row.set_fits(console.fits);
    row.set_bottleneck_s(console.bottleneck_s);
    row.set_assumed(console.assumed);
    row.set_shapes(console.shapes);
  }
  row.set_seconds(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
  row.set_exit_code(code);
  row.set_error(console.error);
  return row;
}

// Model i's run, in a process of its own, into its BatchResult.
void RunBatchModel(BatchRun* batch, int i) {
  const BatchModel& m = batch->models[i];
  BatchResult& r = batch->results[i];
  Console& console = CurrentConsole();
  console = Console();
  console.out = &r.out;
  console.err = &r.err;
  console.show_progress = false;
  console.label = m.path;
  const auto start = std::chrono::steady_clock::now();
  int code = kExitInternal;
  if (!m.error.ok()) {
    code = ReportError(m.error);
  } else {
    code = ShardInChild(m.path, OutputStem(batch->each, m), &batch->write_lock,
                        &batch->children);
  }
  proto::BatchRow row = RowOf(m, console, code, start);
  std::lock_guard<std::mutex> lock(batch->mutex);
  r.row = std::move(row);
  r.done = true;
  batch->finished.notify_all();
}

// Waits for each model in command-line order and prints its row (with its
// text) as soon as it and those before are done; returns the summary, its
// jobs and seconds not yet set, and the most serious exit code in *exit_code.
proto::BatchSummary PrintRows(const ShardOptions& o, BatchRun* batch,
                              int* exit_code) {
  const int n = static_cast<int>(batch->models.size());
  size_t width = 5;
  for (const BatchModel& m : batch->models)
    width = std::max(width, m.path.size());
  const bool table = !o.model.quiet && o.model.report == "text";
  if (table) {
    std::lock_guard<std::mutex> printing(PrintMutex());
    std::cout << TableHeader(width) << std::flush;
  }
  proto::BatchSummary summary;
  BatchWarnings warnings;  // cmd/batch_warnings.h: each once, at the end
  ProgressLine progress(&std::cerr, StderrIsTerminal());
  for (int i = 0; i < n; ++i) {
    BatchResult& r = batch->results[i];
    {
      std::unique_lock<std::mutex> lock(batch->mutex);
      batch->finished.wait(lock, [&r] { return r.done; });
    }
    {
      std::lock_guard<std::mutex> printing(PrintMutex());
      progress.Done();
      std::cerr << warnings.Take(r.err.str(), batch->models[i].path)
                << std::flush;
      if (o.model.verbose)
        std::cerr << r.out.str();  // stdout keeps the rows only
      if (table) std::cout << TableRow(r.row, width) << std::flush;
    }
    *summary.add_models() = r.row;
    if (r.row.exit_code() == kExitNoFit) {
      summary.set_does_not_fit(summary.does_not_fit() + 1);
    } else if (r.row.exit_code() != kExitOk) {
      summary.set_failed(summary.failed() + 1);
    }
    if (Severity(r.row.exit_code()) > Severity(*exit_code)) {
      *exit_code = r.row.exit_code();
    }
    if (!o.model.quiet && i + 1 < n) {
      progress.Update(absl::StrCat("batch: ", i + 1, " of ", n,
                                   " models done, ", summary.failed(),
                                   " failed"));
    }
  }
  progress.Done();
  std::cerr << warnings.Summary() << std::flush;
  return summary;
}

// --report json, the table's last line and --summary; returns the exit code
// with a failed --summary write's.
int ReportSummary(const ShardOptions& o, const proto::BatchSummary& summary,
                  int exit_code) {
  const int n = summary.models_size();
  if (o.model.report == "json") {  // with -q too (kQuietHelp)
    std::cout << ProtoJson(summary);
  }
  if (!o.model.quiet && o.model.report == "text") {
    std::cout << absl::StrFormat(
        "%s, %d failed, %d %s (%s), %.2f s\n", Plural(n, "model"),
        summary.failed(), summary.does_not_fit(),
        summary.does_not_fit() == 1 ? "does not fit" : "do not fit",
        o.out_dir.empty() ? "no --out-dir"
        : o.model.write_anyway || summary.does_not_fit() == 0
            ? "outputs written"
            : "no model written for them",
        summary.seconds());
  }
  if (!o.summary_path.empty()) {
    std::shared_lock<std::shared_mutex> writing(OutputWriteLock());
    const std::string text = fs::path(o.summary_path).extension() == ".csv"
                                 ? SummaryCsv(summary)
                                 : ProtoJson(summary);
    if (absl::Status s = WriteFileAtomically(o.summary_path, text); !s.ok()) {
      const int code = ReportError(s);
      if (Severity(code) > Severity(exit_code)) exit_code = code;
    }
  }
  return exit_code;
}

}  // namespace

int RunShardBatch(const ShardOptions& o) {
  const auto batch_start = std::chrono::steady_clock::now();
  if (absl::Status s = CheckBatchFlags(o); !s.ok()) return ReportError(s);
  // In a model's own process (Note [One child process per batch model]).
  if (std::optional<int> code = ServeAsBatchChild(o)) return *code;
  CreatedFolders created;  // removed at the end if nothing was written there
  if (!o.out_dir.empty() && !created.Make(o.out_dir)) {
    return ReportError(absl::InvalidArgumentError(
        absl::StrCat("--out-dir ", o.out_dir, ": cannot make the folder")));
  }
  BatchRun batch;
  batch.models = CollectModels(o.models, o.out_dir);
  NameOutputs(&batch.models);
  if (absl::Status s = CheckBatchOutputs(o, &batch.models); !s.ok())
    return ReportError(s);
  batch.each = o;
  batch.each.model.library.jobs = 1;  // models, not compiles, run at once
  const int n = static_cast<int>(batch.models.size());
  batch.results = std::vector<BatchResult>(n);
  const int jobs = std::min(o.model.library.jobs, n);
  std::atomic<int> next{0};
  SignalThread signals(&batch.children);
  auto worker = [&] {
    for (int i = next++; i < n && !signals.stopping(); i = next++)
      RunBatchModel(&batch, i);
  };
  std::vector<std::thread> threads;
  for (int j = 0; j < jobs; ++j) threads.emplace_back(worker);
  int exit_code = kExitOk;
  proto::BatchSummary summary = PrintRows(o, &batch, &exit_code);
  for (auto& t : threads) t.join();
  summary.set_jobs(jobs);
  summary.set_seconds(std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - batch_start)
                          .count());
  exit_code = ReportSummary(o, summary, exit_code);
  signals.Stop();
  return exit_code;
}

}  // namespace autoshard::cmd
