#include "sharder/carried_placement.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/plural.h"
#include "base/status_macros.h"
#include "graph/annotations.h"

namespace autoshard::internal {
namespace {

// Fills c->assignment from the annotations; an error for a node that lacks
// one of the two or has a bad value.
absl::Status ReadAttributes(const Prepared& p, CarriedPlacement* c) {
  const int n = p.analysis->dag.num_nodes();
  c->assignment.ipu.assign(n, -1);
  c->assignment.pipeline_stage.assign(n, -1);
  absl::Status missing;
  for (NodeId id = 0; id < n; ++id) {
    const onnx::NodeProto& node = p.analysis->dag.node(id);
    ASSIGN_OR_RETURN(c->assignment.ipu[id],
                     PlacementAttr(node, id, kIpuAttribute));
    ASSIGN_OR_RETURN(c->assignment.pipeline_stage[id],
                     PlacementAttr(node, id, kStageAttribute));
    if (c->assignment.ipu[id] >= 0) ++c->annotated_nodes;
    c->num_ipus = std::max(c->num_ipus, c->assignment.ipu[id] + 1);
    c->num_stages =
        std::max(c->num_stages, c->assignment.pipeline_stage[id] + 1);
    for (const char* attr : {kIpuAttribute, kStageAttribute}) {
      const int value = attr == kIpuAttribute
                            ? c->assignment.ipu[id]
                            : c->assignment.pipeline_stage[id];
      if (value < 0 && missing.ok()) {
        missing = absl::InvalidArgumentError(
            absl::StrCat("node ", NodeLabel(node, id), " has no ", attr,
                         "; a placement to keep needs both ", kIpuAttribute,
                         " and ", kStageAttribute, " on every node"));
      }
    }
  }
  return missing;
}

}  // namespace

CarriedPlacement ReadCarriedPlacement(const Prepared& p) {
  CarriedPlacement c;
  c.error = ReadAttributes(p, &c);
  if (c.error.ok())
    c.error = ValidateAssignment(p.analysis->problem, c.assignment);
  return c;
}

std::string CarriedPlacementText(const CarriedPlacement& c, int num_nodes) {
  return absl::StrCat("the model already carries __ipu_number on ",
                      c.annotated_nodes, " of ", Plural(num_nodes, "node"),
                      " (", Plural(c.num_ipus, "IPU"), ", ",
                      Plural(c.num_stages, "pipeline stage"), ")");
}

}  // namespace autoshard::internal
