// Unique, non-empty node names (DESIGN.md §4.1 step 1). Sharding points refer
// to nodes by name, and many real models have empty or repeated names.
#ifndef AUTOSHARD_GRAPH_NAMING_H_
#define AUTOSHARD_GRAPH_NAMING_H_

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

struct NamingResult {
  int renamed_empty = 0;      // nodes that had no name
  int renamed_duplicate = 0;  // nodes whose name an earlier node had
};

// Gives every node of `graph` (the main graph only) a unique non-empty name.
// An empty name becomes `<op_type>_<file index>`; a repeated name keeps its
// first holder and later holders become `<name>_<k>` with the smallest k >= 1
// that is free. Deterministic: depends only on the file. With `strict`,
// nothing is renamed and InvalidArgument lists up to 10 offending nodes by
// file index and op type (PopRT's behaviour).
absl::StatusOr<NamingResult> AssignNodeNames(bool strict,
                                             onnx::GraphProto* graph);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_NAMING_H_
