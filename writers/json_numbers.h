// JSON that a consumer can compare numerically: protobuf's JSON mapping
// prints every 64-bit integer field as a string ("50903"), so `jq
// '.x > 60000'` compares text. These functions print a message with 64-bit
// integers as JSON numbers, and turn such JSON back into the form protobuf's
// parser accepts, so protobuf stays the schema.
#ifndef AUTOSHARD_WRITERS_JSON_NUMBERS_H_
#define AUTOSHARD_WRITERS_JSON_NUMBERS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace autoshard {

// `message` in protobuf's JSON mapping (proto field names, every field
// printed, indented), except that:
//  - int64/uint64 fields (counts, bytes, FLOPs) are JSON numbers, exact
//    integers in the text (a reader keeping doubles is exact up to 2^53);
//  - a repeated string field named `dims` (the split manifest's shapes)
//    holds a number for each dim made only of digits ("128" -> 128) and a
//    string for a symbolic dim ("batch").
// Strings such as "NaN" that protobuf prints for doubles are kept.
std::string NumericJson(const google::protobuf::Message& message);

// The inverse of NumericJson's `dims` rule: JSON text for a message of
// `message`'s type in which a number in a string field is quoted again, so
// google::protobuf::util::JsonStringToMessage reads it (that parser already
// accepts numbers for int64 fields). Text that is not well-formed JSON is
// returned unchanged, for the parser to report.
std::string QuoteNumbersInStringFields(
    absl::string_view json, const google::protobuf::Descriptor& descriptor);

}  // namespace autoshard

#endif  // AUTOSHARD_WRITERS_JSON_NUMBERS_H_
