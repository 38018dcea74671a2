#include "python/py_classes.h"

#include <pybind11/stl.h>

#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "proto/inspect.pb.h"
#include "python/py_convert.h"
#include "sharder/autoshard.h"
#include "sharder/emit.h"
#include "sharder/inspect.h"

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
      .def_property_readonly("weight_bytes", &IpuMemory::weight_bytes)
      .def_property_readonly("code_bytes", &IpuMemory::code_bytes)
      .def_property_readonly("exchange_bytes", &IpuMemory::exchange_bytes)
      .def_property_readonly("activation_bytes", &IpuMemory::activation_bytes)
      .def_property_readonly("temporary_bytes", &IpuMemory::temporary_bytes)
      .def_property_readonly("total_bytes", &IpuMemory::total_bytes)
      .def_property_readonly("max_tile_bytes", &IpuMemory::max_tile_bytes)
      .def_property_readonly("max_tile", &IpuMemory::max_tile)
      .def_property_readonly("fits", &IpuMemory::fits)
      .def("to_dict", [](const IpuMemory& x) { return MessageToDict(x); })
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
      .def_property_readonly("ipu", &IpuCost::ipu)
      .def_property_readonly("num_nodes", &IpuCost::num_nodes)
      .def_property_readonly("weight_bytes", &IpuCost::weight_bytes)
      .def_property_readonly("activation_bytes", &IpuCost::activation_bytes)
      .def_property_readonly("flops", &IpuCost::flops)
      .def_property_readonly("cut_tensor_in_bytes",
                             &IpuCost::cut_tensor_in_bytes)
      .def_property_readonly("cut_tensor_out_bytes",
                             &IpuCost::cut_tensor_out_bytes)
      .def_property_readonly("memory", &IpuCost::memory)
      .def_property_readonly("stage_time_s", &IpuCost::stage_time_s)
      .def_property_readonly("fits",
                             [](const IpuCost& x) { return x.memory().fits(); })
      .def_property_readonly(
          "max_tile_bytes",
          [](const IpuCost& x) { return x.memory().max_tile_bytes(); })
      .def("to_dict", [](const IpuCost& x) { return MessageToDict(x); })
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

void BindPlan(py::module_& m) {
  using P = proto::Plan;
  py::class_<Plan>(m, "Plan",
                   "A split of a model over IPUs and its estimated costs "
                   "(proto/plan.proto), from autoshard.plan or "
                   "autoshard.evaluate.")
      .def_property_readonly("model", PlanField(&P::model))
      .def_property_readonly("strategy", PlanField(&P::strategy))
      .def_property_readonly("num_ipus", PlanField(&P::num_ipus))
      .def_property_readonly("batch_size", PlanField(&P::batch_size))
      .def_property_readonly("precision", PlanField(&P::precision))
      .def_property_readonly("device", PlanField(&P::device))
      .def_property_readonly("available_memory_proportion",
                             PlanField(&P::available_memory_proportion))
      .def_property_readonly("fits", PlanField(&P::fits))
      .def_property_readonly("out_of_memory", PlanField(&P::out_of_memory))
      .def_property_readonly(
          "bottleneck_s",
          PlanPart(&P::performance, &proto::Performance::bottleneck_s))
      .def_property_readonly(
          "throughput_per_s",
          PlanPart(&P::performance, &proto::Performance::throughput_per_s))
      .def_property_readonly(
          "latency_s",
          PlanPart(&P::performance, &proto::Performance::latency_s))
      .def_property_readonly(
          "lower_bound_s",
          PlanPart(&P::performance, &proto::Performance::lower_bound_s))
      .def_property_readonly(
          "gap_percent",
          PlanPart(&P::performance, &proto::Performance::gap_percent))
      .def_property_readonly(
          "num_nodes", PlanPart(&P::summary, &proto::ModelSummary::num_nodes))
      .def_property_readonly(
          "total_flops",
          PlanPart(&P::summary, &proto::ModelSummary::total_flops))
      .def_property_readonly(
          "total_weight_bytes",
          PlanPart(&P::summary, &proto::ModelSummary::total_weight_bytes))
      .def_property_readonly(
          "nodes_named",
          PlanPart(&P::summary, &proto::ModelSummary::nodes_named))
      .def_property_readonly(
          "planning_s", PlanPart(&P::summary, &proto::ModelSummary::planning_s))
      .def_property_readonly(
          "ops_without_rule",
          [](const Plan& p) {
            return List(p.proto.summary().ops_without_rule());
          })
      .def_property_readonly(
          "warnings", [](const Plan& p) { return List(p.proto.warnings()); })
      .def_property_readonly(
          "num_ipus_tried",
          [](const Plan& p) { return List(p.proto.num_ipus_tried()); })
      .def_property_readonly("ipus",
                             [](const Plan& p) {
                               return std::vector<proto::IpuCost>(
                                   p.proto.ipus().begin(),
                                   p.proto.ipus().end());
                             })
      .def_property_readonly(
          "placement",
          [](const Plan& p) {
            py::dict out;
            for (size_t i = 0; i < p.node_names.size(); ++i) {
              out[py::str(p.node_names[i])] =
                  py::make_tuple(p.ipu[i], p.pipeline_stage[i]);
            }
            return out;
          })
      .def_property_readonly(
          "sharding_points",
          [](const Plan& p) {
            std::vector<std::tuple<std::string, int, int>> out;
            for (const auto& s : p.proto.sharding_points()) {
              out.emplace_back(s.node(), s.ipu(), s.pipeline_stage());
            }
            return out;
          })
      .def("to_json", [](const Plan& p) { return PlanJson(p.proto); })
      .def("sharding_config",
           [](const Plan& p) { return ShardingConfigYaml(p.proto); })
      .def("report", [](const Plan& p) { return ReportText(p.proto); })
      .def("to_dict", [](const Plan& p) { return MessageToDict(p.proto); })
      .def("__repr__", [](const Plan& p) {
        return absl::StrFormat(
            "<autoshard.Plan: %d nodes on %d IPUs (%s), %s, bottleneck %.6g s>",
            p.proto.summary().num_nodes(), p.proto.num_ipus(),
            p.proto.strategy(), p.proto.fits() ? "fits" : "does not fit",
            p.proto.performance().bottleneck_s());
      });
}

void BindInspectReport(py::module_& m) {
  using R = proto::InspectReport;
  py::class_<R>(m, "InspectReport",
                "A model's costs without a split (proto/inspect.proto), from "
                "autoshard.inspect.")
      .def_property_readonly("model", &R::model)
      .def_property_readonly("num_nodes", &R::num_nodes)
      .def_property_readonly("total_flops", &R::total_flops)
      .def_property_readonly("total_macs", &R::total_macs)
      .def_property_readonly("total_weight_bytes", &R::total_weight_bytes)
      .def_property_readonly("parameters", &R::parameters)
      .def_property_readonly("min_ipus", &R::min_ipus)
      .def_property_readonly("single_ipu_memory", &R::single_ipu_memory)
      .def_property_readonly("warnings",
                             [](const R& r) { return List(r.warnings()); })
      .def_property_readonly("shape_assumptions",
                             [](const R& r) {
                               py::list out;
                               for (const auto& a : r.shape_assumptions())
                                 out.append(MessageToDict(a));
                               return out;
                             })
      .def("to_json", [](const R& r) { return ProtoJson(r); })
      .def("text", [](const R& r) { return InspectText(r); })
      .def("to_dict", [](const R& r) { return MessageToDict(r); })
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
