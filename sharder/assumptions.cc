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

}  // namespace autoshard
