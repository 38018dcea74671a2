#include "pod/poprt_flags.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace autoshard::pod {

std::vector<proto::PlannedInput> PlannedInputs(const onnx::GraphProto& graph,
                                               const TensorInfoMap& tensors) {
  std::set<std::string> initializers;
  for (const auto& init : graph.initializer()) initializers.insert(init.name());
  std::vector<proto::PlannedInput> out;
  for (const auto& input : graph.input()) {
    if (initializers.count(input.name())) continue;
    const auto it = tensors.find(input.name());
    if (it == tensors.end() || !it->second.rank_known ||
        it->second.non_tensor) {
      continue;
    }
    proto::PlannedInput& planned = out.emplace_back();
    planned.set_name(input.name());
    for (int64_t d : it->second.dims) planned.add_dims(d < 0 ? 1 : d);
  }
  return out;
}

std::string PopRtFlags(const std::vector<proto::PlannedInput>& inputs,
                       const std::string& precision, double proportion) {
  std::vector<std::string> flags;
  for (const proto::PlannedInput& in : inputs) {
    flags.push_back(absl::StrCat("--input_shape ", in.name(), "=",
                                 absl::StrJoin(in.dims(), ",")));
  }
  if (precision == "fp16") flags.push_back("--precision fp16");
  flags.push_back(absl::StrCat("--available_memory_proportion ", proportion));
  return absl::StrJoin(flags, " ");
}

absl::Status FixInputShapes(const std::vector<proto::PlannedInput>& inputs,
                            onnx::GraphProto* graph) {
  for (const proto::PlannedInput& planned : inputs) {
    onnx::ValueInfoProto* found = nullptr;
    for (auto& input : *graph->mutable_input())
      if (input.name() == planned.name()) found = &input;
    if (found == nullptr || !found->type().has_tensor_type()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--fix-input-shapes: the model has no tensor input '",
                       planned.name(), "'"));
    }
    auto* shape = found->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() != planned.dims_size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--fix-input-shapes: input '", planned.name(), "' has rank ",
          shape->dim_size(), ", the plan's ", planned.dims_size()));
    }
    for (int i = 0; i < planned.dims_size(); ++i)
      shape->mutable_dim(i)->set_dim_value(planned.dims(i));
  }
  return absl::OkStatus();
}

}  // namespace autoshard::pod
