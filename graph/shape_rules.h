// Output shapes that autoshard derives itself where ONNX 1.12 has no
// inference (com.microsoft contrib ops) or cannot have one (data-dependent
// dims), for the shape propagation pass (shape_propagation.h).
//
// Note [Data-dependent dims]
// Some outputs have a length that depends on tensor values no static
// analysis knows: NonZero, NonMaxSuppression, Unique, Compress, TopK with a
// computed k. Such a dim takes the bound the graph implies (a count can never
// exceed it), and the bound is reported as an assumption:
//   NonZero(x)             [rank(x), n]   n <= elements(x)
//   NonMaxSuppression      [n, 3]         n <= B x C x min(max_output_boxes_
//                                                per_class, N) (boxes [B,N,4],
//                                                scores [B,C,N]); without
//                                                max_output_boxes_per_class: 0
//   Unique(x)              [n]            n <= elements(x) (with axis: x's
//                                                dim there)
//   Compress(x, c)         axis dim       n <= min(len(c), x's dim there)
//                                                (the known one of the two)
//   TopK(x, k), k unknown  axis dim       n <= x's dim there
// When the graph implies no bound (the input's shape is not static, a
// product exceeds int64), such a dim is 1, also reported as an assumption
// (issue 8). When even the input's rank is unknown, the output stays
// unknown.
// Loop outputs (trip counts) and If branches are handled with the bodies, in
// shape_propagation.cc.
#ifndef AUTOSHARD_GRAPH_SHAPE_RULES_H_
#define AUTOSHARD_GRAPH_SHAPE_RULES_H_

#include <string>
#include <vector>

#include "graph/shape_values.h"
#include "graph/shapes.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

// What a rule sees of one node: per input, its shape and value (either may be
// null: unknown or absent).
struct RuleNode {
  const onnx::NodeProto& node;
  std::vector<const TensorInfo*> inputs;
  std::vector<const ShapeValue*> values;

  const TensorInfo* in(int i) const {
    return i < static_cast<int>(inputs.size()) ? inputs[i] : nullptr;
  }
  const ShapeValue* value(int i) const {
    return i < static_cast<int>(values.size()) ? values[i] : nullptr;
  }
};

// One derived output. `info.rank_known == false` means nothing was derived.
// `bounds[d]`, when not empty, says why dim d is a bound rather than exact.
struct DerivedOutput {
  TensorInfo info;
  std::vector<std::string> bounds;
};

// Output shapes of `n.node` (one entry per node.output()) by its entry's
// shape rule in the one fallback table (graph/op_rules.h), when the node is
// of the entry's domain: the rules of Note [Data-dependent dims] and, for
// com.microsoft ops, the onnxruntime contrib-op spec: FastGelu, BiasGelu, Gelu,
// QuickGelu, BiasAdd, SkipLayerNormalization, SkipSimplifiedLayerNormalization,
// LayerNormalization, SimplifiedLayerNormalization, EmbedLayerNormalization,
// Attention, FusedMatMul, RotaryEmbedding; for the broadcasting element-wise
// ops (Add ... Where, GreaterOrEqual, LessOrEqual: ONNX 1.12 defines these
// two by a function body without an inference function), the numpy
// broadcast of the inputs' shapes; for ai.onnx.ml ops, the ONNX-ML spec:
// Imputer, Binarizer, Scaler, Normalizer (input 0's shape), OneHotEncoder
// (one more dim, the categories), LinearClassifier ([N], [N, classes]),
// LinearRegressor ([N, targets]), FeatureVectorizer ([N, sum of
// inputdimensions]). Other ops: empty.
std::vector<DerivedOutput> DeriveOutputShapes(const RuleNode& n);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_SHAPE_RULES_H_
