// The rule functions the one fallback table (graph/op_rules.cc) points at:
// shape rules defined in graph/shape_rules.cc, type rules in
// graph/type_rules.cc. Only op_rules.cc and those two files include this.
#ifndef AUTOSHARD_GRAPH_OP_RULES_INTERNAL_H_
#define AUTOSHARD_GRAPH_OP_RULES_INTERNAL_H_

#include <vector>

#include "graph/op_rules.h"

namespace autoshard::rules {

// Shape rules (ShapeRuleFn).
std::vector<DerivedOutput> NonZeroShape(const RuleNode& n);
std::vector<DerivedOutput> NmsShape(const RuleNode& n);
std::vector<DerivedOutput> TopKShape(const RuleNode& n);
std::vector<DerivedOutput> UniqueShape(const RuleNode& n);
std::vector<DerivedOutput> CompressShape(const RuleNode& n);
std::vector<DerivedOutput> BroadcastShape(const RuleNode& n);
std::vector<DerivedOutput> CompareShape(const RuleNode& n);
std::vector<DerivedOutput> WhereShape(const RuleNode& n);
std::vector<DerivedOutput> LikeInput0Shape(const RuleNode& n);
std::vector<DerivedOutput> SkipLayerNormShape(const RuleNode& n);
std::vector<DerivedOutput> LayerNormShape(const RuleNode& n);
std::vector<DerivedOutput> EmbedLayerNormShape(const RuleNode& n);
std::vector<DerivedOutput> AttentionShape(const RuleNode& n);
std::vector<DerivedOutput> FusedMatMulShape(const RuleNode& n);
std::vector<DerivedOutput> FloatLikeInput0Shape(const RuleNode& n);
std::vector<DerivedOutput> OneHotEncoderShape(const RuleNode& n);
std::vector<DerivedOutput> LinearClassifierShape(const RuleNode& n);
std::vector<DerivedOutput> LinearRegressorShape(const RuleNode& n);
std::vector<DerivedOutput> FeatureVectorizerShape(const RuleNode& n);

// Type rules (TypeRuleFn).
std::vector<ElemRank> SameAsInput0Types(const TypeQuery& q,
                                        const onnx::NodeProto& node);
std::vector<ElemRank> SkipLayerNormTypes(const TypeQuery& q,
                                         const onnx::NodeProto& node);
std::vector<ElemRank> DropoutTypes(const TypeQuery& q,
                                   const onnx::NodeProto& node);
std::vector<ElemRank> BroadcastTypes(const TypeQuery& q,
                                     const onnx::NodeProto& node);
std::vector<ElemRank> CompareTypes(const TypeQuery& q,
                                   const onnx::NodeProto& node);
std::vector<ElemRank> WhereTypes(const TypeQuery& q,
                                 const onnx::NodeProto& node);
std::vector<ElemRank> CastTypes(const TypeQuery& q,
                                const onnx::NodeProto& node);
std::vector<ElemRank> CastLikeTypes(const TypeQuery& q,
                                    const onnx::NodeProto& node);
std::vector<ElemRank> PredicateTypes(const TypeQuery& q,
                                     const onnx::NodeProto& node);
std::vector<ElemRank> MatMulTypes(const TypeQuery& q,
                                  const onnx::NodeProto& node);
std::vector<ElemRank> MatMulIntegerTypes(const TypeQuery& q,
                                         const onnx::NodeProto& node);
std::vector<ElemRank> QLinearMatMulTypes(const TypeQuery& q,
                                         const onnx::NodeProto& node);
std::vector<ElemRank> ConvIntegerTypes(const TypeQuery& q,
                                       const onnx::NodeProto& node);
std::vector<ElemRank> QLinearConvTypes(const TypeQuery& q,
                                       const onnx::NodeProto& node);
std::vector<ElemRank> DequantizeLinearTypes(const TypeQuery& q,
                                            const onnx::NodeProto& node);
std::vector<ElemRank> QuantizeLinearTypes(const TypeQuery& q,
                                          const onnx::NodeProto& node);
std::vector<ElemRank> DynamicQuantizeLinearTypes(const TypeQuery& q,
                                                 const onnx::NodeProto& node);
std::vector<ElemRank> ShapeTypes(const TypeQuery& q,
                                 const onnx::NodeProto& node);
std::vector<ElemRank> SizeTypes(const TypeQuery& q,
                                const onnx::NodeProto& node);
std::vector<ElemRank> IndicesTypes(const TypeQuery& q,
                                   const onnx::NodeProto& node);
std::vector<ElemRank> RangeTypes(const TypeQuery& q,
                                 const onnx::NodeProto& node);
std::vector<ElemRank> Rank2Types(const TypeQuery& q,
                                 const onnx::NodeProto& node);
std::vector<ElemRank> ReshapeTypes(const TypeQuery& q,
                                   const onnx::NodeProto& node);
std::vector<ElemRank> ExpandTypes(const TypeQuery& q,
                                  const onnx::NodeProto& node);
std::vector<ElemRank> ConstantOfShapeTypes(const TypeQuery& q,
                                           const onnx::NodeProto& node);
std::vector<ElemRank> SqueezeTypes(const TypeQuery& q,
                                   const onnx::NodeProto& node);
std::vector<ElemRank> UnsqueezeTypes(const TypeQuery& q,
                                     const onnx::NodeProto& node);
std::vector<ElemRank> ConcatTypes(const TypeQuery& q,
                                  const onnx::NodeProto& node);
std::vector<ElemRank> AllAsInput0Types(const TypeQuery& q,
                                       const onnx::NodeProto& node);
std::vector<ElemRank> TopKTypes(const TypeQuery& q,
                                const onnx::NodeProto& node);
std::vector<ElemRank> OneHotTypes(const TypeQuery& q,
                                  const onnx::NodeProto& node);
std::vector<ElemRank> GatherTypes(const TypeQuery& q,
                                  const onnx::NodeProto& node);
std::vector<ElemRank> GatherElementsTypes(const TypeQuery& q,
                                          const onnx::NodeProto& node);
std::vector<ElemRank> GatherNDTypes(const TypeQuery& q,
                                    const onnx::NodeProto& node);
std::vector<ElemRank> ReduceTypes(const TypeQuery& q,
                                  const onnx::NodeProto& node);
std::vector<ElemRank> ArgTypes(const TypeQuery& q, const onnx::NodeProto& node);
std::vector<ElemRank> AttentionTypes(const TypeQuery& q,
                                     const onnx::NodeProto& node);
std::vector<ElemRank> EmbedLayerNormTypes(const TypeQuery& q,
                                          const onnx::NodeProto& node);
std::vector<ElemRank> FloatSameRankTypes(const TypeQuery& q,
                                         const onnx::NodeProto& node);
std::vector<ElemRank> OneHotEncoderTypes(const TypeQuery& q,
                                         const onnx::NodeProto& node);
std::vector<ElemRank> ClassifierTypes(const TypeQuery& q,
                                      const onnx::NodeProto& node);
std::vector<ElemRank> RegressorTypes(const TypeQuery& q,
                                     const onnx::NodeProto& node);
std::vector<ElemRank> LabelEncoderTypes(const TypeQuery& q,
                                        const onnx::NodeProto& node);

}  // namespace autoshard::rules

#endif  // AUTOSHARD_GRAPH_OP_RULES_INTERNAL_H_
