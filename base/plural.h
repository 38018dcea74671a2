// Counts in text: "1 model", "2 models", "1 node has", "3 nodes have". Every
// count a person reads goes through Plural (issue 16, point 8), so no
// message says "1 models". Here, the lowest layer, so that every folder can
// use it.
#ifndef AUTOSHARD_BASE_PLURAL_H_
#define AUTOSHARD_BASE_PLURAL_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace autoshard {

// "<n> <singular>" when n is 1, else "<n> <plural>" (e.g. Plural(n, "node
// has", "nodes have")). n is written in full, without separators.
inline std::string Plural(int64_t n, absl::string_view singular,
                          absl::string_view plural) {
  return absl::StrCat(n, " ", n == 1 ? singular : plural);
}

// The regular plural: "<n> <noun>" or "<n> <noun>s" ("1 file", "2 files").
inline std::string Plural(int64_t n, absl::string_view noun) {
  return n == 1 ? absl::StrCat(n, " ", noun) : absl::StrCat(n, " ", noun, "s");
}

}  // namespace autoshard

#endif  // AUTOSHARD_BASE_PLURAL_H_
