#include "sharder/assumptions.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace autoshard {
namespace internal {

void AddAssumptions(
    const Prepared& p,
    google::protobuf::RepeatedPtrField<proto::ShapeAssumption>* out) {
  for (const UnresolvedDim& d : p.unresolved_dims) {
    proto::ShapeAssumption* a = out->Add();
    a->set_tensor(d.input);
    a->set_dim(d.dim);
    a->set_value(1);
    a->set_dim_name(d.name);
    a->set_reason("input dim neither the model nor an option fixes: 1 assumed");
  }
  AddDataDependentAssumptions(p, out);
}

void AddDataDependentAssumptions(
    const Prepared& p,
    google::protobuf::RepeatedPtrField<proto::ShapeAssumption>* out) {
  for (const ShapeAssumption& s : p.shape_assumptions) {
    proto::ShapeAssumption* a = out->Add();
    a->set_node(s.node);
    a->set_op_type(s.op_type);
    a->set_tensor(s.tensor);
    a->set_dim(s.dim);
    a->set_value(s.value);
    a->set_reason(s.reason);
  }
}

}  // namespace internal

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
