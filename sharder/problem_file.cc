#include "sharder/problem_file.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "costmodel/device_model.h"
#include "costmodel/device_profile.h"
#include "google/protobuf/util/json_util.h"
#include "graph/model_io.h"
#include "sharder/ipu_summaries.h"
#include "sharder/prepare.h"
#include "writers/emit.h"

namespace autoshard {
namespace {

absl::Status Bad(const std::string& source, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", what));
}

// Fills producers, consumers and the per-slot vectors from the tensors, a
// tensor with copy_s > 0 getting the bytes that take that long over `link`
// bytes/s; then topo_order by Kahn's rule in node order.
absl::Status BuildEdges(const proto::Problem& in, const std::string& source,
                        double link, ShardingProblem* p) {
  const int n = in.nodes_size();
  p->producers.assign(n, {});
  p->consumers.assign(n, {});
  p->output_bytes.assign(n, {});
  p->output_consumers.assign(n, {});
  p->output_is_graph_output.assign(n, {});
  p->input_tensors.assign(n, {});
  p->is_graph_output.assign(n, 0);
  for (int t = 0; t < in.tensors_size(); ++t) {
    const proto::ProblemTensor& tensor = in.tensors(t);
    const int32_t from = tensor.producer();
    if (from < 0 || from >= n)
      return Bad(source, absl::StrCat("tensor ", t, ": producer ", from,
                                      " is not a node index"));
    if (tensor.bytes() < 0 || tensor.copy_s() < 0)
      return Bad(source,
                 absl::StrCat("tensor ", t, " of node '", in.nodes(from).name(),
                              "': negative bytes or copy_s"));
    const int32_t slot = static_cast<int32_t>(p->output_bytes[from].size());
    p->output_bytes[from].push_back(
        tensor.has_copy_s()
            ? static_cast<int64_t>(std::llround(tensor.copy_s() * link))
            : tensor.bytes());
    p->output_consumers[from].emplace_back();
    p->output_is_graph_output[from].push_back(tensor.graph_output() ? 1 : 0);
    if (tensor.graph_output()) p->is_graph_output[from] = 1;
    for (int32_t c : tensor.consumers()) {
      if (c < 0 || c >= n || c == from)
        return Bad(source, absl::StrCat("tensor ", t, " of node '",
                                        in.nodes(from).name(), "': consumer ",
                                        c, " is not another node's index"));
      auto& readers = p->output_consumers[from][slot];
      if (std::find(readers.begin(), readers.end(), c) != readers.end())
        continue;
      readers.push_back(c);
      p->input_tensors[c].emplace_back(from, slot);
      auto& cons = p->consumers[from];
      if (std::find(cons.begin(), cons.end(), c) == cons.end()) {
        cons.push_back(c);
        p->producers[c].push_back(from);
      }
    }
  }
  // Ascending, as a model's DAG lists them (graph/graph.h).
  for (int32_t v = 0; v < n; ++v) {
    std::sort(p->producers[v].begin(), p->producers[v].end());
    std::sort(p->consumers[v].begin(), p->consumers[v].end());
  }
  std::vector<int32_t> missing(n);
  std::vector<int32_t> ready;
  for (int32_t v = 0; v < n; ++v) {
    missing[v] = static_cast<int32_t>(p->producers[v].size());
    if (missing[v] == 0) ready.push_back(v);
  }
  // Kahn's rule, lowest index first among the ready nodes.
  std::make_heap(ready.begin(), ready.end(), std::greater<int32_t>());
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), std::greater<int32_t>());
    const int32_t v = ready.back();
    ready.pop_back();
    p->topo_order.push_back(v);
    for (int32_t c : p->consumers[v]) {
      if (--missing[c] > 0) continue;
      ready.push_back(c);
      std::push_heap(ready.begin(), ready.end(), std::greater<int32_t>());
    }
  }
  if (static_cast<int>(p->topo_order.size()) != n) {
    for (int32_t v = 0; v < n; ++v) {
      if (missing[v] > 0)
        return Bad(source, absl::StrCat("node '", in.nodes(v).name(),
                                        "' is on a cycle of tensors"));
    }
  }
  return absl::OkStatus();
}

// Problem.colocate into p's colocate_group and colocate_names.
absl::Status ReadColocate(const proto::Problem& in, const std::string& source,
                          ShardingProblem* p) {
  if (in.colocate_size() == 0) return absl::OkStatus();
  const int n = in.nodes_size();
  p->colocate_group.assign(n, -1);
  for (int g = 0; g < in.colocate_size(); ++g) {
    const proto::ColocateGroup& group = in.colocate(g);
    p->colocate_names.push_back(group.name().empty() ? absl::StrCat("#", g)
                                                     : group.name());
    for (int32_t v : group.nodes()) {
      if (v < 0 || v >= n)
        return Bad(source,
                   absl::StrCat("colocate group '", p->colocate_names.back(),
                                "': node ", v, " is not a node index"));
      if (p->colocate_group[v] >= 0 && p->colocate_group[v] != g)
        return Bad(source,
                   absl::StrCat("node '", in.nodes(v).name(),
                                "' is in two colocate groups: '",
                                p->colocate_names[p->colocate_group[v]],
                                "' and '", p->colocate_names.back(), "'"));
      p->colocate_group[v] = g;
    }
  }
  return absl::OkStatus();
}

}  // namespace

void SetPlainMemory(int64_t capacity_bytes, proto::MemoryCounts counts,
                    proto::DeviceProfile* device) {
  device->set_memory_model(
      counts == proto::MEMORY_COUNTS_WEIGHTS_AND_ACTIVATIONS
          ? proto::MEMORY_MODEL_PLAIN_WEIGHTS_AND_ACTIVATIONS
          : proto::MEMORY_MODEL_PLAIN_WEIGHTS);
  device->set_tiles_per_ipu(1);
  device->set_bytes_per_tile(capacity_bytes);
  device->set_grain_bytes(1);
  device->set_tile_fixed_bytes(0);
}

namespace {

// Host devices (Problem.num_host_devices, ProblemNode.host_compute_s and
// host_only): into p's host fields, host_time_s only when a node has one.
absl::Status ReadHost(const proto::Problem& in, const std::string& source,
                      ShardingProblem* p) {
  // More host devices than nodes could only stay empty, and the host DP's
  // table grows with their count: refused.
  if (in.num_host_devices() < 0 || in.num_host_devices() > in.nodes_size())
    return Bad(source,
               absl::StrCat("num_host_devices ", in.num_host_devices(),
                            " is not in 0..", in.nodes_size(), " (the nodes)"));
  p->num_host_devices = in.num_host_devices();
  bool any_time = false, any_only = false;
  for (const proto::ProblemNode& node : in.nodes()) {
    any_time |= node.has_host_compute_s();
    any_only |= node.host_only();
  }
  if ((any_time || any_only) && in.num_host_devices() > 0 &&
      in.copy_model() != proto::COPY_MODEL_HOST) {
    return Bad(source,
               "host devices need copy_model COPY_MODEL_HOST (a copy to or "
               "from the host goes through the host link)");
  }
  for (int32_t v = 0; v < in.nodes_size(); ++v) {
    const proto::ProblemNode& node = in.nodes(v);
    // NaN and infinities too (JSON's "NaN" parses): a time is finite, >= 0.
    if (!(std::isfinite(node.host_compute_s()) && node.host_compute_s() >= 0))
      return Bad(
          source,
          absl::StrCat("node '", node.name(), "': host_compute_s ",
                       node.host_compute_s(), " is not a finite time >= 0"));
    if (node.host_only() && node.allowed_ipus_size() > 0)
      return Bad(source, absl::StrCat("node '", node.name(),
                                      "': host_only with allowed_ipus (it runs "
                                      "on no IPU)"));
    if (node.host_only() &&
        (!node.has_host_compute_s() || in.num_host_devices() == 0)) {
      return Bad(source, absl::StrCat("node '", node.name(),
                                      "': host_only needs host_compute_s and "
                                      "num_host_devices > 0"));
    }
    if (any_time)
      p->host_time_s.push_back(node.has_host_compute_s() ? node.host_compute_s()
                                                         : -1);
    if (any_only) p->host_only.push_back(node.host_only() ? 1 : 0);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LoadedProblem> FromProblemProto(const proto::Problem& in,
                                               const std::string& source) {
  LoadedProblem out;
  const int n = in.nodes_size();
  if (n == 0) return Bad(source, "the problem has no nodes");
  if (in.num_ipus() < 1 || in.num_ipus() > n)
    return Bad(source, absl::StrCat("num_ipus ", in.num_ipus(),
                                    " is not in 1..", n, " (the nodes)"));
  out.num_ipus = in.num_ipus();
  out.batch = std::max<int64_t>(1, in.batch_size());
  if (in.precision().empty() || in.precision() == "fp32") {
    out.precision = Precision::kFp32;
  } else if (in.precision() == "fp16") {
    out.precision = Precision::kFp16;
  } else {
    return Bad(source, absl::StrCat("precision '", in.precision(),
                                    "' is not fp32 or fp16"));
  }
  if (in.has_device_profile()) {
    out.device = in.device_profile();
    if (absl::Status s = ValidateDeviceProfile(out.device); !s.ok())
      return Bad(source, absl::StrCat("device_profile: ", s.message()));
  } else {
    ASSIGN_OR_RETURN(
        out.device,
        LoadDeviceProfile(in.device().empty() ? "ipu2" : in.device()));
  }
  if (in.has_capacity_bytes()) {
    if (in.capacity_bytes() <= 0)
      return Bad(source, absl::StrCat("capacity_bytes ", in.capacity_bytes(),
                                      " is not positive"));
    SetPlainMemory(in.capacity_bytes(), in.memory_counts(), &out.device);
    if (absl::Status s = ValidateDeviceProfile(out.device); !s.ok())
      return Bad(source, absl::StrCat("capacity_bytes: ", s.message()));
  }
  ShardingProblem& p = out.problem;
  p.copies_through_host = in.copy_model() == proto::COPY_MODEL_HOST;
  RETURN_IF_ERROR(BuildEdges(in, source, out.device.link_bytes_per_s(), &p));
  const int w_count = in.weights_size();
  for (const proto::ProblemWeight& w : in.weights()) {
    if (w.bytes() < 0)
      return Bad(source,
                 absl::StrCat("weight '", w.name(), "': negative bytes"));
    p.weight_size_bytes.push_back(w.bytes());
  }
  bool any_floating_given = false;
  for (const proto::ProblemWeight& w : in.weights())
    any_floating_given |= w.has_floating();
  if (any_floating_given) {
    for (const proto::ProblemWeight& w : in.weights())
      p.weight_is_float.push_back(!w.has_floating() || w.floating() ? 1 : 0);
  }
  for (int32_t v = 0; v < n; ++v) {
    const proto::ProblemNode& node = in.nodes(v);
    if (node.flops() < 0 || node.compute_s() < 0 || node.code_bytes() < 0 ||
        node.temporary_bytes() < 0 || node.activation_inputs() < 0)
      return Bad(source,
                 absl::StrCat("node '", node.name(),
                              "': negative flops, seconds, bytes or inputs"));
    p.names.push_back(node.name().empty() ? absl::StrCat("node_", v)
                                          : node.name());
    p.flops.push_back(node.flops());
    // Absent: derived (ShardingProblem's negative); present, 0 included: as
    // given.
    p.node_time_s.push_back(node.has_compute_s() ? node.compute_s() : -1);
    p.code_bytes.push_back(node.has_code_bytes() ? node.code_bytes() : -1);
    p.op_class.push_back(node.op_class().empty() ? "other" : node.op_class());
    p.temporary_bytes.push_back(node.temporary_bytes());
    p.is_constant.push_back(node.constant() ? 1 : 0);
    p.node_weights.emplace_back();
    for (int32_t w : node.weights()) {
      if (w < 0 || w >= w_count)
        return Bad(source, absl::StrCat("node '", node.name(), "': weight ", w,
                                        " is not a weight index"));
      p.node_weights.back().push_back(w);
    }
    int64_t total = 0, largest = 0;
    for (int64_t b : p.output_bytes[v]) {
      total = SaturatingAdd(total, b);
      largest = std::max(largest, b);
    }
    p.activation_bytes.push_back(total);
    p.largest_output_bytes.push_back(largest);
    p.num_activation_inputs.push_back(
        node.has_activation_inputs()
            ? node.activation_inputs()
            : static_cast<int32_t>(p.producers[v].size()));
    if (node.allowed_ipus_size() > 0) {
      if (p.allowed_ipus.empty())
        p.allowed_ipus.assign(n, ShardingProblem::kAnyIpu);
      uint64_t mask = 0;
      for (int32_t d : node.allowed_ipus()) {
        if (d < 0 || d >= 64)
          return Bad(source,
                     absl::StrCat("node '", node.name(), "': allowed IPU ", d,
                                  " is not in 0..63"));
        mask |= uint64_t{1} << d;
      }
      p.allowed_ipus[v] = mask;
    }
  }
  RETURN_IF_ERROR(ReadColocate(in, source, &p));
  RETURN_IF_ERROR(ReadHost(in, source, &p));
  FillProblemDefaults(&p);
  return out;
}

proto::Problem ToProblemProto(const ShardingProblem& p,
                              const proto::DeviceProfile& device,
                              Precision precision, int num_ipus,
                              int64_t batch) {
  proto::Problem out;
  out.set_num_ipus(num_ipus);
  *out.mutable_device_profile() = device;
  out.set_device(device.name());
  out.set_precision(internal::PrecisionName(precision));
  out.set_batch_size(batch);
  out.set_num_host_devices(p.num_host_devices);
  out.set_copy_model(p.copies_through_host ? proto::COPY_MODEL_HOST
                                           : proto::COPY_MODEL_ADJACENT_STAGES);
  if (device.memory_model() != proto::MEMORY_MODEL_TILES) {
    out.set_capacity_bytes(SaturatingMul(int64_t{device.tiles_per_ipu()},
                                         device.bytes_per_tile()));
    out.set_memory_counts(
        device.memory_model() ==
                proto::MEMORY_MODEL_PLAIN_WEIGHTS_AND_ACTIVATIONS
            ? proto::MEMORY_COUNTS_WEIGHTS_AND_ACTIVATIONS
            : proto::MEMORY_COUNTS_WEIGHTS);
  }
  for (size_t w = 0; w < p.weight_size_bytes.size(); ++w) {
    proto::ProblemWeight* weight = out.add_weights();
    weight->set_name(absl::StrCat("w", w));
    weight->set_bytes(p.weight_size_bytes[w]);
    if (w < p.weight_is_float.size())
      weight->set_floating(p.weight_is_float[w] != 0);
  }
  for (int32_t v = 0; v < p.num_nodes(); ++v) {
    proto::ProblemNode* node = out.add_nodes();
    node->set_name(p.names[v]);
    node->set_flops(p.flops[v]);
    if (!p.node_time_s.empty() && p.node_time_s[v] >= 0)
      node->set_compute_s(p.node_time_s[v]);
    if (!p.code_bytes.empty() && p.code_bytes[v] >= 0)
      node->set_code_bytes(p.code_bytes[v]);
    if (!p.num_activation_inputs.empty() &&
        p.num_activation_inputs[v] != static_cast<int>(p.producers[v].size()))
      node->set_activation_inputs(p.num_activation_inputs[v]);
    node->set_op_class(p.op_class[v]);
    node->set_temporary_bytes(p.temporary_bytes[v]);
    node->set_constant(p.is_constant[v] != 0);
    for (int32_t w : p.node_weights[v]) node->add_weights(w);
    if (!p.host_time_s.empty() && p.host_time_s[v] >= 0)
      node->set_host_compute_s(p.host_time_s[v]);
    if (!p.host_only.empty() && p.host_only[v]) node->set_host_only(true);
    if (!p.allowed_ipus.empty() &&
        p.allowed_ipus[v] != ShardingProblem::kAnyIpu) {
      for (int d = 0; d < 64; ++d)
        if ((p.allowed_ipus[v] >> d) & 1) node->add_allowed_ipus(d);
    }
    for (size_t slot = 0; slot < p.output_bytes[v].size(); ++slot) {
      const auto& readers = p.output_consumers[v][slot];
      const bool output = p.output_is_graph_output[v][slot] != 0;
      if (readers.empty() && !output && p.output_bytes[v][slot] == 0) continue;
      proto::ProblemTensor* t = out.add_tensors();
      t->set_producer(v);
      for (int32_t c : readers) t->add_consumers(c);
      t->set_bytes(p.output_bytes[v][slot]);
      t->set_graph_output(output);
    }
  }
  // Every group a node is in, named or not (colocate_names may be short).
  int32_t groups = static_cast<int32_t>(p.colocate_names.size());
  for (int32_t g : p.colocate_group) groups = std::max(groups, g + 1);
  for (int32_t g = 0; g < groups; ++g) {
    proto::ColocateGroup* group = out.add_colocate();
    if (g < static_cast<int32_t>(p.colocate_names.size()))
      group->set_name(p.colocate_names[g]);
    for (int32_t v = 0; v < static_cast<int32_t>(p.colocate_group.size());
         ++v) {
      if (p.colocate_group[v] == g) group->add_nodes(v);
    }
  }
  return out;
}

absl::StatusOr<LoadedProblem> ReadProblemFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  proto::Problem problem;
  google::protobuf::util::JsonParseOptions options;
  if (auto s =
          google::protobuf::util::JsonStringToMessage(text, &problem, options);
      !s.ok()) {
    return Bad(path, absl::StrCat("not a problem file (proto/problem.proto): ",
                                  s.ToString()));
  }
  return FromProblemProto(problem, path);
}

absl::Status WriteProblemFile(const proto::Problem& problem,
                              const std::string& path) {
  return WriteFileAtomically(path, ProtoJson(problem));
}

}  // namespace autoshard
