// Where each main-graph node runs: the dense per-node form of the
// annotations (graph/annotations.h). The planner hands it to every writer as
// it is (sharder/outputs/write_outputs.h), never through node attributes.
#ifndef AUTOSHARD_GRAPH_PLACEMENT_H_
#define AUTOSHARD_GRAPH_PLACEMENT_H_

#include <vector>

namespace autoshard {

// Both indexed by node, in the main graph's file order; values >= 0.
struct Placement {
  std::vector<int> ipu;             // written as __ipu_number
  std::vector<int> pipeline_stage;  // written as __pipeline_stage
};

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_PLACEMENT_H_
