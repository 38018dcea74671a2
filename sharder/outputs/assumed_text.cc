#include "sharder/outputs/assumed_text.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace autoshard {

std::string AssumedText(
    const google::protobuf::RepeatedPtrField<proto::ShapeAssumption>& a) {
  constexpr size_t kListed = 4;
  std::vector<std::string> parts;
  for (const proto::ShapeAssumption& s : a) {
    std::string dim = s.dim_name().empty()
                          ? absl::StrCat(s.tensor(), "[", s.dim(), "]")
                          : s.dim_name();
    absl::StrAppend(&dim, "=", s.value());
    if (!s.node().empty())
      absl::StrAppend(&dim, " (", s.op_type(), " ", s.node(), ")");
    // Two inputs sharing a symbolic dim ("batch") assume it once.
    if (std::find(parts.begin(), parts.end(), dim) == parts.end())
      parts.push_back(std::move(dim));
  }
  if (parts.size() > kListed) {
    const size_t more = parts.size() - kListed;
    parts.resize(kListed);
    parts.push_back(absl::StrCat("and ", more, " more"));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace autoshard
