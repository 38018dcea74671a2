// The Conv and pooling attributes ONNX 1.12's convPoolShapeInference
// trusts (graph/onnx_guard.h): every strides, dilations, kernel_shape, pads
// and output_padding value in range, and their sizes agreeing on one
// spatial rank.
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/onnx_guard.h"
#include "graph/onnx_guard_internal.h"

namespace autoshard::guard_internal {
namespace {

// Checks that every value of ints attribute `name` is at least `min` and at
// most kMaxDim; returns its size (-1 when absent).
absl::StatusOr<int> CheckInts(const onnx::NodeProto& node, const char* name,
                              int64_t min) {
  const onnx::AttributeProto* a = FindAttr(node, name);
  if (a == nullptr) return -1;
  for (int64_t v : a->ints()) {
    if (v < min || v > kMaxDim) {
      return NodeError(node,
                       absl::StrCat(name, " has ", v, "; each must be ",
                                    min == 0 ? "0" : "1", " to ", kMaxDim));
    }
  }
  return a->ints_size();
}

}  // namespace

// The ops whose inference is ONNX's convPoolShapeInference (or, for
// ConvTranspose, its own loop over the same attributes).
bool IsConvOrPool(const std::string& op) {
  static const std::set<std::string> kOps = {
      "Conv",        "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool",
      "AveragePool", "LpPool",        "MaxUnpool",   "DeformConv"};
  return kOps.contains(op);
}

absl::Status CheckConvOrPool(const onnx::NodeProto& node) {
  ASSIGN_OR_RETURN(int strides, CheckInts(node, "strides", 1));
  ASSIGN_OR_RETURN(int dilations, CheckInts(node, "dilations", 1));
  ASSIGN_OR_RETURN(int kernel, CheckInts(node, "kernel_shape", 1));
  ASSIGN_OR_RETURN(int pads, CheckInts(node, "pads", 0));
  ASSIGN_OR_RETURN(int output_padding, CheckInts(node, "output_padding", 0));
  ASSIGN_OR_RETURN(int output_shape, CheckInts(node, "output_shape", 0));
  (void)output_shape;
  if (const onnx::AttributeProto* g = FindAttr(node, "group");
      g != nullptr && (g->i() < 1 || g->i() > kMaxDim)) {
    return NodeError(
        node, absl::StrCat("group is ", g->i(), "; it must be at least 1"));
  }
  // The spatial rank: the first of these that is given; every other must
  // agree with it (pads holds a begin and an end per spatial dim).
  int rank = kernel >= 0 ? kernel : strides >= 0 ? strides : dilations;
  if (rank < 0 && output_padding >= 0) rank = output_padding;
  if (rank < 0 && pads >= 0) {
    if (pads % 2 != 0) {
      return NodeError(node, absl::StrCat("pads has ", pads,
                                          " values; it needs two per "
                                          "spatial dim"));
    }
    rank = pads / 2;
  }
  const std::pair<const char*, int> sizes[] = {
      {"strides", strides},
      {"dilations", dilations},
      {"kernel_shape", kernel},
      {"output_padding", output_padding}};
  for (const auto& [name, size] : sizes) {
    if (size >= 0 && size != rank) {
      return NodeError(node, absl::StrCat(name, " has ", size,
                                          " values, the others ", rank));
    }
  }
  if (pads >= 0 && pads != 2 * rank) {
    return NodeError(node, absl::StrCat("pads has ", pads, " values; ", rank,
                                        " spatial dims need ", 2 * rank));
  }
  return absl::OkStatus();
}

}  // namespace autoshard::guard_internal
