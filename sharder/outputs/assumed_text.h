// The dims a plan's figures assume (Plan.assumptions, filled by
// sharder/assumptions.h) in one line for the report's header.
#ifndef AUTOSHARD_SHARDER_OUTPUTS_ASSUMED_TEXT_H_
#define AUTOSHARD_SHARDER_OUTPUTS_ASSUMED_TEXT_H_

#include <string>

#include "google/protobuf/repeated_field.h"
#include "proto/plan.pb.h"

namespace autoshard {

// The assumptions in one line for a person: "seq_len=1, input[2]=1,
// nz[1]=12 (NonZero n2)"; input dims by symbolic name when they have one,
// at most 4 listed then "and N more". Empty when there are none.
std::string AssumedText(
    const google::protobuf::RepeatedPtrField<proto::ShapeAssumption>& a);

}  // namespace autoshard

#endif  // AUTOSHARD_SHARDER_OUTPUTS_ASSUMED_TEXT_H_
