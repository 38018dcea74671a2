// The extension autoshard._autoshard: the library's public API (sharder/
// autoshard.h, the split and inspect entry points) for the Python package
// python/autoshard/, which checks argument types, turns paths, bytes and
// onnx.ModelProto into the (data, is_path) pairs taken here, and documents
// the API. The classes are in python/py_classes.cc; the type hints of both
// in python/autoshard/_autoshard.pyi.
//
// Note [Models cross as bytes]
// A model comes in as a path (read by LoadModel: external data checked
// beside it, the path in error messages) or as serialized bytes (parsed by
// ParseModelBytes, "model bytes" in messages); an annotated model goes out
// as bytes. So the caller's protobuf (python3-protobuf's, or a wheel's) never
// meets the one this module links, and no Python object crosses into the
// library. Loading and planning run with the GIL released (Python threads
// plan at once, as the library allows), and reacquire it only to call the
// `progress` callback (ProgressRelay).
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <climits>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/output_guard.h"
#include "costmodel/device_profile.h"
#include "graph/model_io.h"
#include "python/py_classes.h"
#include "python/py_convert.h"
#include "sharder/autoshard.h"
#include "sharder/inspect.h"
#include "sharder/plan_pod.h"
#include "solver/strategies/registry.h"
#include "writers/emit.h"
#include "writers/split/split.h"

namespace autoshard::python {
namespace {
namespace py = pybind11;
namespace fs = std::filesystem;

// A model read from a path or parsed from bytes (Note [Models cross as
// bytes]).
struct Source {
  onnx::ModelProto model;
  std::string label;  // the path, or "model bytes"; starts error messages
  fs::path path;      // empty for bytes
  std::vector<std::string> external_files;  // relative to path's folder
};

// With `stream_weights` a path's inline weights stay in the file
// (graph/model_io.h LoadModel: planning reads no weight bytes); `progress`
// (streaming only) sees (bytes read, file size).
absl::StatusOr<Source> Load(
    const std::string& data, bool is_path, bool stream_weights = false,
    const std::function<void(int64_t, int64_t)>& progress = nullptr) {
  Source source;
  if (!is_path) {
    source.label = "model bytes";
    auto model = ParseModelBytes(data, source.label);
    if (!model.ok()) return model.status();
    source.model = *std::move(model);
    return source;
  }
  auto loaded = LoadModel(data, stream_weights, progress);
  if (!loaded.ok()) return loaded.status();
  source.model = std::move(loaded->model);
  source.label = data;
  source.path = loaded->path;
  source.external_files = std::move(loaded->external_files);
  return source;
}

// `status` with the model's label in front, as the CLI prints it (unless
// the message already starts with it).
absl::Status Labelled(const Source& source, const absl::Status& status) {
  if (status.ok() || absl::StartsWith(status.message(), source.label)) {
    return status;
  }
  return absl::Status(status.code(),
                      absl::StrCat(source.label, ": ", status.message()));
}

// The options python/autoshard/__init__.py passes as a dict, their types
// checked there, and with the CLI's messages the texts the CLI parses
// before the library (--num-ipus, --strategy, --batch-size, --input-shape,
// --precision); Options::Validate and LoadDeviceProfile check the rest, as
// for the CLI.
struct CallOptions {
  Options options;
  std::map<std::string, int64_t> dims;  // dim_param -> value
  std::optional<pod::PodOptions> pod;   // total_ipus given
};

// Sets *out to d[key] when it is there and not None.
template <typename T>
void Set(const py::dict& d, const char* key, T* out) {
  if (d.contains(key) && !d[key].is_none()) *out = d[key].cast<T>();
}

// total_ipus, batch_sizes, replica_grouping (stride, size) and shard_over
// (0: the whole group) as PlanPod's options; none without total_ipus.
std::optional<pod::PodOptions> ToPodOptions(const py::dict& d) {
  int total = 0;
  Set(d, "total_ipus", &total);
  if (total == 0) return std::nullopt;
  pod::PodOptions pod;
  pod.total_ipus = total;
  Set(d, "batch_sizes", &pod.batch_sizes);
  if (d.contains("replica_grouping") && !d["replica_grouping"].is_none()) {
    const auto g = d["replica_grouping"].cast<std::pair<int, int>>();
    pod.grouping = pod::ReplicaGrouping{g.first, g.second};
  }
  if (d.contains("shard_over") && !d["shard_over"].is_none()) {
    pod.sharded = true;
    const int over = d["shard_over"].cast<int>();
    if (over > 0) pod.shard_over = over;
  }
  return pod;
}

CallOptions ToOptions(const py::dict& d) {
  CallOptions call;
  Options& o = call.options;
  Set(d, "num_ipus", &o.num_ipus);
  Set(d, "max_ipus", &o.max_ipus);
  Set(d, "strategy", &o.strategy);
  Set(d, "optimal_perf", &o.optimal_perf);
  Set(d, "max_candidates", &o.max_candidates);
  Set(d, "max_search_seconds", &o.max_search_s);
  Set(d, "compile_cmd", &o.compile_cmd);
  Set(d, "compile_timeout", &o.compile_timeout_s);
  Set(d, "bound_seconds", &o.bound_s);
  Set(d, "jobs", &o.jobs);
  Set(d, "batch_size", &o.shapes.batch_size);
  Set(d, "input_shapes", &o.shapes.input_shapes);
  Set(d, "dims", &call.dims);
  std::string precision = "fp32", device = "ipu2";
  Set(d, "precision", &precision);
  o.precision = precision == "fp16" ? Precision::kFp16 : Precision::kFp32;
  Set(d, "device", &device);
  o.device = ValueOrRaise(LoadDeviceProfile(device));
  Set(d, "available_memory_proportion", &o.available_memory_proportion);
  Set(d, "strict_names", &o.strict_names);
  Set(d, "strict", &o.strict);
  Set(d, "weights", &o.weights);
  Set(d, "pins", &o.pins);  // "NODE=IPU" each (plan()'s pins)
  Set(d, "weights_location", &o.weights_location);
  Set(d, "retrieval_mode", &o.retrieval_mode);
  if (absl::Status s = o.Validate(); !s.ok()) RaiseStatus(s);
  call.pod = ToPodOptions(d);
  if (call.pod) {
    if (absl::Status s = call.pod->Validate(); !s.ok()) RaiseStatus(s);
  }
  return call;
}

// Sets every graph-input dim whose dim_param is a key of `dims` to its
// value, before shape inference (the dims of other tensors follow from
// it). InvalidArgument for a name no graph-input dim has, or a value
// outside 0 .. 2^31-1 (0: an empty KV cache, as the CLI's --dim).
absl::Status FixDims(const std::map<std::string, int64_t>& dims,
                     onnx::ModelProto* model) {
  std::map<std::string, bool> used;
  for (const auto& [name, value] : dims) {
    if (value < 0 || value > INT32_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat("dims['", name, "'] = ", value,
                       " is not an integer from 0 to 2^31-1"));
    }
    used[name] = false;
  }
  for (auto& input : *model->mutable_graph()->mutable_input()) {
    if (!input.type().has_tensor_type()) continue;
    auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (auto& dim : *shape->mutable_dim()) {
      auto it = dims.find(dim.dim_param());
      if (!dim.has_dim_param() || it == dims.end()) continue;
      dim.set_dim_value(it->second);
      used[it->first] = true;
    }
  }
  for (const auto& [name, found] : used) {
    if (!found) {
      return absl::InvalidArgumentError(
          absl::StrCat("dims: no graph input has a dim named '", name, "'"));
    }
  }
  return absl::OkStatus();
}

// Relays the progress of loading and of the search to a Python callable
// `callback(step, done, total, best_max_tile_bytes)` (python/autoshard/
// __init__.py adapts it to the user's): ("load", bytes read, file size,
// None) while a path streams in, ("plan", candidates, --max-candidates, the
// closest split's fullest tile or None) about once a second from a search.
// It is called with the GIL taken. The first exception it raises is kept
// (the library cannot be interrupted: work goes on, the callback is not
// called again) and raised when the call ends. The library may copy the
// std::functions while the GIL is released, so they hold a pointer to this,
// never a py::object.
class ProgressRelay {
 public:
  explicit ProgressRelay(py::object callback)
      : callback_(std::move(callback)) {}

  // For LoadModel: at most one call per percent of the file (and its end).
  std::function<void(int64_t, int64_t)> LoadProgress() {
    if (callback_.is_none()) return nullptr;
    return [this, shown = int64_t{-1}](int64_t done, int64_t total) mutable {
      if (done < total && done - shown < total / 100) return;
      shown = done;
      Call("load", done, total, INT64_MAX);
    };
  }
  void Install(Options* options) {
    if (callback_.is_none()) return;
    const int64_t total = options->max_candidates;
    options->progress = [this, total](int64_t candidates,
                                      int64_t best_max_tile) {
      Call("plan", candidates, total, best_max_tile);
    };
  }
  // With the GIL held: raises what the callback raised, if anything.
  void RaiseIfFailed() {
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  void Call(const char* step, int64_t done, int64_t total, int64_t best) {
    py::gil_scoped_acquire gil;
    std::lock_guard<std::mutex> lock(mu_);
    if (error_) return;
    try {
      callback_(step, done, total,
                best == INT64_MAX ? py::object(py::none())
                                  : py::object(py::int_(best)));
    } catch (...) {
      error_ = std::current_exception();
    }
  }

  py::object callback_;
  std::mutex mu_;
  std::exception_ptr error_;
};

// The model's load with `call`'s dims fixed, GIL released; raises on error
// (and what `relay`'s callback raised). A path's inline weights stay in the
// file unless a compiler will judge the plan (it reads the model's bytes).
Source LoadForPlanning(const std::string& data, bool is_path, CallOptions* call,
                       ProgressRelay* relay = nullptr) {
  absl::StatusOr<Source> source;
  {
    py::gil_scoped_release release;
    source = Load(data, is_path, call->options.compile_cmd.empty(),
                  relay == nullptr ? nullptr : relay->LoadProgress());
    if (source.ok()) {
      absl::Status s = FixDims(call->dims, &source->model);
      if (!s.ok()) source = Labelled(*source, s);
    }
  }
  if (relay != nullptr) relay->RaiseIfFailed();
  Source out = ValueOrRaise(std::move(source));
  call->options.model_dir = out.path.parent_path();
  call->options.external_files = out.external_files;
  return out;
}

Plan PlanPy(const std::string& data, bool is_path, const py::dict& options,
            py::object progress) {
  CallOptions call = ToOptions(options);
  ProgressRelay relay(std::move(progress));
  Source source = LoadForPlanning(data, is_path, &call, &relay);
  relay.Install(&call.options);
  absl::StatusOr<Plan> plan;
  {
    py::gil_scoped_release release;
    plan = call.pod ? pod::PlanPod(source.model, call.options, *call.pod)
                    : PlanModel(source.model, call.options);
  }
  relay.RaiseIfFailed();
  if (!plan.ok()) RaiseStatus(Labelled(source, plan.status()));
  if (is_path) plan->proto.set_model(data);
  return *std::move(plan);
}

// `points` as (node, ipu, stage) tuples, or when `config_yaml` is not None
// a sharding config's text (parsed as `autoshard apply` parses the file
// named `config_what`).
Plan EvaluatePy(const std::string& data, bool is_path,
                const std::vector<std::tuple<std::string, int, int>>& points,
                py::object config_yaml, const std::string& config_what,
                const py::dict& options) {
  CallOptions call = ToOptions(options);
  std::vector<NamedShardingPoint> named;
  if (!config_yaml.is_none()) {
    named = ValueOrRaise(
        ParseShardingConfigYaml(config_yaml.cast<std::string>(), config_what));
  }
  for (const auto& [node, ipu, stage] : points) {
    named.push_back({node, ipu, stage});
  }
  Source source = LoadForPlanning(data, is_path, &call);
  absl::StatusOr<Plan> plan;
  {
    py::gil_scoped_release release;
    plan = PlanFromShardingPoints(source.model, call.options, named);
  }
  if (!plan.ok()) RaiseStatus(Labelled(source, plan.status()));
  if (is_path) plan->proto.set_model(data);
  return *std::move(plan);
}

py::bytes ApplyPy(const std::string& data, bool is_path, const Plan& plan) {
  absl::StatusOr<std::string> bytes;
  {
    py::gil_scoped_release release;
    bytes = [&]() -> absl::StatusOr<std::string> {
      auto source = Load(data, is_path);
      if (!source.ok()) return source.status();
      absl::Status s = ApplyPlan(plan, &source->model);
      if (!s.ok()) return Labelled(*source, s);
      std::string out;
      if (!source->model.SerializeToString(&out)) {
        return absl::InternalError("cannot serialize the annotated model");
      }
      return out;
    }();
  }
  return py::bytes(ValueOrRaise(std::move(bytes)));
}

proto::InspectReport InspectPy(const std::string& data, bool is_path,
                               const py::dict& options, py::object progress) {
  CallOptions call = ToOptions(options);
  ProgressRelay relay(std::move(progress));
  Source source = LoadForPlanning(data, is_path, &call, &relay);
  relay.Install(&call.options);
  absl::StatusOr<proto::InspectReport> report;
  {
    py::gil_scoped_release release;
    report = InspectModel(source.model, call.options);
  }
  relay.RaiseIfFailed();
  if (!report.ok()) RaiseStatus(Labelled(source, report.status()));
  if (is_path) report->set_model(data);
  return *std::move(report);
}

// What `autoshard split PATH --out-dir OUT_DIR` does, the manifest naming
// the model `manifest_model`. Returns the manifest and the warnings.
absl::StatusOr<std::pair<proto::SplitManifest, std::vector<std::string>>>
SplitFile(const std::string& path, const std::string& out_dir,
          const std::string& manifest_model) {
  auto loaded = LoadModel(path, /*stream_weights=*/true);
  if (!loaded.ok()) return loaded.status();
  const fs::path source_dir = loaded->path.parent_path();
  std::vector<fs::path> inputs = {loaded->path};
  for (const auto& rel : loaded->external_files) {
    inputs.push_back(source_dir / rel);
  }
  if (absl::Status s = CheckSplitDir(out_dir, inputs); !s.ok()) return s;
  auto split = SplitStreamed(&loaded->model, loaded->streamed,
                             [&](const onnx::ModelProto& model) {
                               return SplitModel(model, source_dir);
                             });
  if (!split.ok()) {
    return absl::Status(split.status().code(),
                        absl::StrCat(path, ": ", split.status().message()));
  }
  // As the CLI's split writes it: relative to the manifest's folder.
  split->manifest.set_model(
      manifest_model.empty() ? "" : PathFromFolder(manifest_model, out_dir));
  std::vector<std::string> warnings = split->warnings;
  if (absl::Status s =
          WriteSplit(*split, out_dir, source_dir, loaded->path, &warnings);
      !s.ok()) {
    return s;
  }
  return std::make_pair(std::move(split->manifest), std::move(warnings));
}

py::tuple SplitPy(const std::string& path, const std::string& out_dir,
                  const std::string& manifest_model) {
  absl::StatusOr<std::pair<proto::SplitManifest, std::vector<std::string>>>
      result;
  {
    py::gil_scoped_release release;
    result = SplitFile(path, out_dir, manifest_model);
  }
  auto [manifest, warnings] = ValueOrRaise(std::move(result));
  return py::make_tuple(MessageToDict(manifest), py::cast(warnings));
}

}  // namespace
}  // namespace autoshard::python

PYBIND11_MODULE(_autoshard, m) {
  namespace py = pybind11;
  using namespace autoshard::python;  // NOLINT: the functions above
  m.doc() =
      "autoshard's library (C++) for the Python package autoshard: use "
      "autoshard.plan, apply, evaluate, split and inspect instead.";
  m.attr("__version__") = AUTOSHARD_VERSION;
  BindClasses(m);
  m.def("plan", &PlanPy, py::arg("data"), py::arg("is_path"),
        py::arg("options"), py::arg("progress"));
  m.def("evaluate", &EvaluatePy, py::arg("data"), py::arg("is_path"),
        py::arg("points"), py::arg("config_yaml"), py::arg("config_what"),
        py::arg("options"));
  m.def("apply", &ApplyPy, py::arg("data"), py::arg("is_path"),
        py::arg("plan"));
  m.def("inspect", &InspectPy, py::arg("data"), py::arg("is_path"),
        py::arg("options"), py::arg("progress"));
  m.def("split", &SplitPy, py::arg("path"), py::arg("out_dir"),
        py::arg("manifest_model"));
  // The library's defaults (autoshard::Options, which `shard`'s flags bind
  // to), so plan()'s keywords default to the same values.
  m.def("option_defaults", [] {
    const autoshard::Options o;
    py::dict d;
    d["max_ipus"] = o.max_ipus;
    d["strategy"] = o.strategy;
    d["max_candidates"] = o.max_candidates;
    d["max_search_seconds"] = o.max_search_s;
    d["bound_seconds"] = o.bound_s;
    d["compile_timeout"] = o.compile_timeout_s;
    d["jobs"] = o.jobs;
    return d;
  });
  m.def("builtin_devices", &autoshard::BuiltinDeviceNames);
  // The registry's names, as `shard --strategy` lists them.
  m.def("strategy_names", &autoshard::StrategyNames);
}
