// The dims a plan's figures assume (Plan.assumptions, filled by
// sharder/assumptions.h) in one line for the report's header.
#ifndef AUTOSHARD_WRITERS_ASSUMED_TEXT_H_
#define AUTOSHARD_WRITERS_ASSUMED_TEXT_H_

#include <string>

#include "google/protobuf/repeated_field.h"
#include "proto/plan.pb.h"

namespace autoshard {

// The assumptions in one line for a person: "seq_len=1, input[2]=1,
// nz[1]=12 (NonZero n2)"; input dims by symbolic name when they have one,
// at most 4 listed then "and N more". Empty when there are none.
std::string AssumedText(
    const google::protobuf::RepeatedPtrField<proto::ShapeAssumption>& a);

// The unresolved nodes named (the first 20), then "and N more" for the
// rest of the count: "a, b, c" or "a, ..., t and 760 more".
std::string UnresolvedNodesText(const proto::ShapesVerdict& verdict);

// The shapes verdict (proto/plan.proto ShapesVerdict) in one line for a
// person, after "shapes: ":
//   "exact"
//   "assumed: seq_len=1 (not the model's own; set them, e.g. --dim
//    seq_len=1)"
//   "unresolved: 3 nodes have dims no inference found, costed as 1 (a, b,
//    c): FLOPs and memory may be too low"
// `assumptions` are the plan's (or the inspection's), listed by AssumedText.
std::string ShapesText(
    const proto::ShapesVerdict& verdict,
    const google::protobuf::RepeatedPtrField<proto::ShapeAssumption>&
        assumptions);

// "" for an exact or assumed verdict; for an unresolved one, what a "fits"
// must add: ", on unresolved dims (3 nodes costed as 1)".
std::string FitsCaveat(const proto::ShapesVerdict& verdict);

}  // namespace autoshard

#endif  // AUTOSHARD_WRITERS_ASSUMED_TEXT_H_
