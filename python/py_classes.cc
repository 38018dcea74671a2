#include "python/py_classes.h"

#include <pybind11/stl.h>

#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "proto/inspect.pb.h"
#include "python/py_convert.h"
#include "sharder/autoshard.h"
#include "sharder/inspect.h"
#include "writers/emit.h"

namespace autoshard::python {
namespace py = pybind11;

namespace {

template <typename T>
std::vector<T> List(const google::protobuf::RepeatedField<T>& field) {
  return {field.begin(), field.end()};
}
std::vector<std::string> List(
    const google::protobuf::RepeatedPtrField<std::string>& field) {
  return {field.begin(), field.end()};
}

void BindMemory(py::module_& m) {
  using proto::IpuMemory;
  py::class_<IpuMemory>(m, "Memory",
                        "One IPU's memory under the tile-memory model "
                        "(DESIGN.md 3.3), in bytes.")
      .def_property_readonly("weight_bytes", &IpuMemory::weight_bytes,
                             "Weights on the IPU (always live).")
      .def_property_readonly("code_bytes", &IpuMemory::code_bytes,
                             "Code and vertex state of its ops.")
      .def_property_readonly(
          "exchange_bytes", &IpuMemory::exchange_bytes,
          "Buffers of the cut tensors it receives and sends.")
      .def_property_readonly(
          "activation_bytes", &IpuMemory::activation_bytes,
          "Live activations at the peak step of its schedule.")
      .def_property_readonly("temporary_bytes", &IpuMemory::temporary_bytes,
                             "MatMul/Conv/Gemm temporaries then, capped by the "
                             "available memory proportion.")
      .def_property_readonly("total_bytes", &IpuMemory::total_bytes,
                             "All of the above.")
      .def_property_readonly("max_tile_bytes", &IpuMemory::max_tile_bytes,
                             "Bytes on its fullest tile.")
      .def_property_readonly(
          "max_tile", &IpuMemory::max_tile,
          "That tile's global index: IPU x tiles per IPU + tile.")
      .def_property_readonly("fits", &IpuMemory::fits,
                             "max_tile_bytes <= the device's bytes per tile.")
      .def(
          "to_dict", [](const IpuMemory& x) { return MessageToDict(x); },
          "The fields as a dict.")
      .def("__repr__", [](const IpuMemory& x) {
        return absl::StrFormat(
            "<autoshard.Memory: %d bytes, fullest tile %d bytes, %s>",
            x.total_bytes(), x.max_tile_bytes(),
            x.fits() ? "fits" : "overflows");
      });
}

void BindIpu(py::module_& m) {
  using proto::IpuCost;
  py::class_<IpuCost>(m, "Ipu",
                      "What a plan puts on one IPU and what it costs there.")
      .def_property_readonly("ipu", &IpuCost::ipu,
                             "The IPU's index from 0 (its pipeline stage too).")
      .def_property_readonly("num_nodes", &IpuCost::num_nodes,
                             "Nodes placed on it.")
      .def_property_readonly("weight_bytes", &IpuCost::weight_bytes,
                             "Distinct weights its nodes read.")
      .def_property_readonly("activation_bytes", &IpuCost::activation_bytes,
                             "The sum of its nodes' output tensors.")
      .def_property_readonly(
          "flops", &IpuCost::flops,
          "Floating-point operations of its nodes (2 per multiply-accumulate).")
      .def_property_readonly(
          "cut_tensor_in_bytes", &IpuCost::cut_tensor_in_bytes,
          "Cut tensors it receives (copied between adjacent IPUs only, so a "
          "tensor passing through counts both ways).")
      .def_property_readonly("cut_tensor_out_bytes",
                             &IpuCost::cut_tensor_out_bytes,
                             "Cut tensors it sends.")
      .def_property_readonly(
          "memory", &IpuCost::memory,
          "Its memory by kind under the tile-memory model (a Memory).")
      .def_property_readonly(
          "stage_time_s", &IpuCost::stage_time_s,
          "Its pipeline stage's time under the performance model, seconds.")
      .def_property_readonly(
          "fits", [](const IpuCost& x) { return x.memory().fits(); },
          "memory.fits")
      .def_property_readonly(
          "max_tile_bytes",
          [](const IpuCost& x) { return x.memory().max_tile_bytes(); },
          "memory.max_tile_bytes")
      .def(
          "to_dict", [](const IpuCost& x) { return MessageToDict(x); },
          "The fields as a dict (memory as a dict).")
      .def("__repr__", [](const IpuCost& x) {
        return absl::StrFormat(
            "<autoshard.Ipu %d: %d nodes, fullest tile %d bytes, %s, stage "
            "%.6g s>",
            x.ipu(), x.num_nodes(), x.memory().max_tile_bytes(),
            x.memory().fits() ? "fits" : "overflows", x.stage_time_s());
      });
}

// A plan-proto field: plan.proto.<field>().
template <typename R>
auto PlanField(R (proto::Plan::*field)() const) {
  return [field](const Plan& p) { return (p.proto.*field)(); };
}

// A plan-proto figure: plan.proto.<part>().<field>().
template <typename Part, typename R>
auto PlanPart(const Part& (proto::Plan::*part)() const,
              R (Part::*field)() const) {
  return [part, field](const Plan& p) { return ((p.proto.*part)().*field)(); };
}

using PlanClass = py::class_<Plan>;

// What was planned: the model, strategy, IPUs, device; whether it fits.
void BindPlanFields(PlanClass& c) {
  using P = proto::Plan;
  c.def_property_readonly(
       "model", PlanField(&P::model),
       "The model's path as given; empty for bytes and ModelProto.")
      .def_property_readonly(
          "strategy", PlanField(&P::strategy),
          "raw, search, optimal, auto, or apply (a given split).")
      .def_property_readonly(
          "num_ipus", PlanField(&P::num_ipus),
          "IPUs of the plan (for num_ipus='auto', the count chosen).")
      .def_property_readonly("batch_size", PlanField(&P::batch_size),
                             "Samples per pipeline step: the first input's "
                             "first dim (1 if unknown).")
      .def_property_readonly("precision", PlanField(&P::precision),
                             "fp32 or fp16.")
      .def_property_readonly("device", PlanField(&P::device),
                             "The device profile's name.")
      .def_property_readonly(
          "available_memory_proportion",
          PlanField(&P::available_memory_proportion),
          "The share of tile memory MatMul/Conv temporaries may use.")
      .def_property_readonly("fits", PlanField(&P::fits),
                             "Every IPU fits the tile-memory model.")
      .def_property_readonly("out_of_memory", PlanField(&P::out_of_memory),
                             "The compiler-style message for the first IPU "
                             "that does not fit; empty when all fit.");
}

// The performance and summary figures.
void BindPlanFigures(PlanClass& c) {
  using P = proto::Plan;
  c.def_property_readonly(
       "bottleneck_s",
       PlanPart(&P::performance, &proto::Performance::bottleneck_s),
       "The slowest stage's time, seconds.")
      .def_property_readonly(
          "throughput_per_s",
          PlanPart(&P::performance, &proto::Performance::throughput_per_s),
          "Samples per second: batch_size / bottleneck_s.")
      .def_property_readonly(
          "latency_s",
          PlanPart(&P::performance, &proto::Performance::latency_s),
          "One sample through every stage, seconds.")
      .def_property_readonly(
          "lower_bound_s",
          PlanPart(&P::performance, &proto::Performance::lower_bound_s),
          "No split of the model has a smaller bottleneck, seconds.")
      .def_property_readonly(
          "gap_percent",
          PlanPart(&P::performance, &proto::Performance::gap_percent),
          "(bottleneck_s / lower_bound_s - 1) x 100.")
      .def_property_readonly(
          "num_nodes", PlanPart(&P::summary, &proto::ModelSummary::num_nodes),
          "Nodes of the main graph.")
      .def_property_readonly(
          "total_flops",
          PlanPart(&P::summary, &proto::ModelSummary::total_flops),
          "The model's FLOPs (2 per multiply-accumulate).")
      .def_property_readonly(
          "total_weight_bytes",
          PlanPart(&P::summary, &proto::ModelSummary::total_weight_bytes),
          "The model's weights, each once.")
      .def_property_readonly(
          "nodes_named",
          PlanPart(&P::summary, &proto::ModelSummary::nodes_named),
          "Nodes with empty or repeated names that autoshard named "
          "<op_type>_<index>.")
      .def_property_readonly(
          "planning_s", PlanPart(&P::summary, &proto::ModelSummary::planning_s),
          "Seconds from the loaded model to the plan.");
}

// The lists: rules missing, assumptions, warnings, IPUs, placement.
void BindPlanLists(PlanClass& c) {
  c.def_property_readonly(
       "ops_without_rule",
       [](const Plan& p) { return List(p.proto.summary().ops_without_rule()); },
       "Op types costed by the fallback rule (output elements as FLOPs).")
      .def_property_readonly(
          "assumptions",
          [](const Plan& p) {
            py::list out;
            for (const auto& a : p.proto.assumptions())
              out.append(MessageToDict(a));
            return out;
          },
          "The dims the figures assume, not the model's own: dicts of node, "
          "op_type, tensor, dim, value, reason, dim_name; input dims costed "
          "as 1 first (node ''), then data-dependent dims.")
      .def_property_readonly(
          "shapes",
          [](const Plan& p) { return MessageToDict(p.proto.shapes()); },
          "The verdict of trust in the dims: a dict of verdict ('exact', "
          "'assumed' or 'unresolved'), dim_flags (the assumed input dims as "
          "CLI flags, e.g. '--dim seq_len=1'), data_dependent_dims, "
          "unresolved_node_count and unresolved_nodes (the first 20).")
      .def_property_readonly(
          "warnings", [](const Plan& p) { return List(p.proto.warnings()); },
          "What the CLI prints as warnings: ops without a rule, unresolved "
          "dims, data-dependent dims assumed...")
      .def_property_readonly(
          "num_ipus_tried",
          [](const Plan& p) { return List(p.proto.num_ipus_tried()); },
          "num_ipus='auto': the counts tried, in order.")
      .def_property_readonly(
          "ipus",
          [](const Plan& p) {
            return std::vector<proto::IpuCost>(p.proto.ipus().begin(),
                                               p.proto.ipus().end());
          },
          "Per IPU, in order: a list of Ipu.")
      .def_property_readonly(
          "placement",
          [](const Plan& p) {
            py::dict out;
            for (size_t i = 0; i < p.node_names.size(); ++i) {
              out[py::str(p.node_names[i])] = py::make_tuple(
                  p.placement.ipu[i], p.placement.pipeline_stage[i]);
            }
            return out;
          },
          "Every node's name (after autoshard's naming) -> (ipu, "
          "pipeline_stage).")
      .def_property_readonly(
          "sharding_points",
          [](const Plan& p) {
            std::vector<std::tuple<std::string, int, int>> out;
            for (const auto& s : p.proto.sharding_points()) {
              out.emplace_back(s.node(), s.ipu(), s.pipeline_stage());
            }
            return out;
          },
          "The fewest PopRT (node, ipu, stage) points that reproduce the "
          "plan.");
}

// The CLI's outputs of the plan, and its dict and repr.
void BindPlanOutputs(PlanClass& c) {
  c.def(
       "to_json", [](const Plan& p) { return PlanJson(p.proto); },
       "The plan file that `autoshard shard --plan` writes (protobuf's JSON "
       "mapping).")
      .def(
          "sharding_config",
          [](const Plan& p) { return ShardingConfigYaml(p.proto); },
          "The PopRT sharding config that `autoshard shard --sharding-config` "
          "writes (YAML).")
      .def(
          "report", [](const Plan& p) { return ReportText(p.proto); },
          "The text report that `autoshard shard` prints.")
      .def(
          "to_dict", [](const Plan& p) { return MessageToDict(p.proto); },
          "The plan file's fields as a dict.")
      .def("__repr__", [](const Plan& p) {
        return absl::StrFormat(
            "<autoshard.Plan: %d nodes on %d IPU%s (%s), %s, bottleneck %.6g "
            "s>",
            p.proto.summary().num_nodes(), p.proto.num_ipus(),
            p.proto.num_ipus() == 1 ? "" : "s", p.proto.strategy(),
            p.proto.fits() ? "fits" : "does not fit",
            p.proto.performance().bottleneck_s());
      });
}

void BindPlan(py::module_& m) {
  PlanClass c(m, "Plan",
              "A split of a model over IPUs and its estimated costs "
              "(proto/plan.proto), from autoshard.plan or "
              "autoshard.evaluate.");
  BindPlanFields(c);
  BindPlanFigures(c);
  BindPlanLists(c);
  BindPlanOutputs(c);
}

void BindInspectReport(py::module_& m) {
  using R = proto::InspectReport;
  py::class_<R>(m, "InspectReport",
                "A model's costs without a split (proto/inspect.proto), from "
                "autoshard.inspect.")
      .def_property_readonly(
          "model", &R::model,
          "The model's path as given; empty for bytes and ModelProto.")
      .def_property_readonly("num_nodes", &R::num_nodes,
                             "Nodes of the main graph.")
      .def_property_readonly("total_flops", &R::total_flops,
                             "FLOPs (2 per multiply-accumulate).")
      .def_property_readonly(
          "total_macs", &R::total_macs,
          "Multiply-accumulates of Conv/MatMul/Gemm-class ops.")
      .def_property_readonly("total_weight_bytes", &R::total_weight_bytes,
                             "Weights, each once.")
      .def_property_readonly("parameters", &R::parameters, "Weight elements.")
      .def_property_readonly("min_ipus", &R::min_ipus,
                             "The fewest IPUs (1, 2, 4, ... 256) whose plan "
                             "fits, planned as shard --num-ipus auto plans "
                             "it; 0 when none does.")
      .def_property_readonly(
          "single_ipu_memory", &R::single_ipu_memory,
          "The whole model on one IPU under the tile-memory model (a Memory).")
      .def_property_readonly(
          "warnings", [](const R& r) { return List(r.warnings()); },
          "What the CLI prints as warnings.")
      .def_property_readonly(
          "shapes", [](const R& r) { return MessageToDict(r.shapes()); },
          "The verdict of trust in the dims, as Plan.shapes.")
      .def_property_readonly(
          "shape_assumptions",
          [](const R& r) {
            py::list out;
            for (const auto& a : r.shape_assumptions())
              out.append(MessageToDict(a));
            return out;
          },
          "Data-dependent dims set to the bound the graph implies: dicts of "
          "node, op_type, tensor, dim, value, reason.")
      .def(
          "to_json", [](const R& r) { return ProtoJson(r); },
          "What `autoshard inspect --json` prints.")
      .def(
          "text", [](const R& r) { return InspectText(r); },
          "What `autoshard inspect` prints.")
      .def(
          "to_dict", [](const R& r) { return MessageToDict(r); },
          "The report's fields as a dict.")
      .def("__repr__", [](const R& r) {
        return absl::StrFormat(
            "<autoshard.InspectReport: %d nodes, %.6g FLOPs, %d weight bytes, "
            "min_ipus %d>",
            r.num_nodes(), r.total_flops(), r.total_weight_bytes(),
            r.min_ipus());
      });
}

}  // namespace

void BindClasses(py::module_& m) {
  BindMemory(m);
  BindIpu(m);
  BindPlan(m);
  BindInspectReport(m);
}

}  // namespace autoshard::python
