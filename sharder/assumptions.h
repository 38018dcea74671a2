// The dims a plan's figures assume, listed in the plan (Plan.assumptions)
// and named in the report's header ("assumed: seq_len=1"), so an assumed
// shape is not mistaken for the model's own (issue 16, point 3).
#ifndef AUTOSHARD_SHARDER_ASSUMPTIONS_H_
#define AUTOSHARD_SHARDER_ASSUMPTIONS_H_

#include <string>

#include "absl/status/status.h"
#include "google/protobuf/repeated_field.h"
#include "proto/plan.pb.h"
#include "sharder/prepare.h"
#include "writers/assumed_text.h"

namespace autoshard::internal {

// Appends to `out` the input dims `p` costed as 1 (Prepared.unresolved_dims,
// value 1, node empty) then the data-dependent dims shape propagation set
// (Prepared.shape_assumptions), in that order.
void AddAssumptions(
    const Prepared& p,
    google::protobuf::RepeatedPtrField<proto::ShapeAssumption>* out);

// Appends only Prepared.shape_assumptions (what `inspect` lists; it lists
// the unresolved input dims on their own).
void AddDataDependentAssumptions(
    const Prepared& p,
    google::protobuf::RepeatedPtrField<proto::ShapeAssumption>* out);

// The verdict of trust in `p`'s dims (proto/plan.proto ShapesVerdict):
// unresolved when some node's costs rest on unknown dims
// (NodeCost::shapes_known false), else assumed when `p` set an input dim
// or a data-dependent dim, else exact.
proto::ShapesVerdict MakeShapesVerdict(const Prepared& p);

// --strict (Options::strict): OK for an exact verdict; otherwise
// InvalidArgument naming what is assumed (with the flags that would fix
// it) or unresolved (the first nodes), so the CLI exits 2.
absl::Status CheckStrictShapes(const proto::ShapesVerdict& verdict,
                               const Prepared& p);

}  // namespace autoshard::internal

#endif  // AUTOSHARD_SHARDER_ASSUMPTIONS_H_
