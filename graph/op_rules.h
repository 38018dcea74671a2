// The one fallback table (issue 25, point 6): per op, what autoshard derives
// itself where ONNX 1.12's inference (graph/onnx_inference.h) leaves an
// output unknown. One entry per op name, holding both of its rules:
//  - shape: the output shapes of Note [Data-dependent dims]
//    (graph/shape_rules.h), the com.microsoft contrib ops, the ONNX-ML ops,
//    the broadcasting element-wise ops. A shape rule applies only to nodes
//    of its entry's domain (a com.microsoft LayerNormalization, not ONNX's).
//    Read by DeriveOutputShapes (shape propagation).
//  - type: the outputs' element type and rank, whatever the node's domain,
//    for the interface types of the split (graph/tensor_types.h,
//    ApplyTypeRules).
// Either may be null. The rule functions live with their kind
// (graph/shape_rules.cc, graph/type_rules.cc); the op names live here only.
#ifndef AUTOSHARD_GRAPH_OP_RULES_H_
#define AUTOSHARD_GRAPH_OP_RULES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/shape_rules.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

// What a type rule knows of one tensor: element type (0: unknown) and rank
// (-1: unknown).
struct ElemRank {
  int32_t elem = 0;
  int rank = -1;
};

// What a type rule may ask of the graph around a node (names of enclosing
// graphs included); implemented by the type rules' walk (type_rules.cc).
class TypeQuery {
 public:
  virtual ~TypeQuery() = default;
  // Input `i` of `node`; {} when absent or unknown.
  virtual ElemRank In(const onnx::NodeProto& node, int i) const = 0;
  // Length of the 1-D int input `i`: its constant value's, else its
  // inferred dim; -1 when unknown.
  virtual int Length(const onnx::NodeProto& node, int i) const = 0;
  // Axes of Squeeze/Unsqueeze/Reduce*: the attribute or input 1; -1 when
  // unknown, -2 when absent.
  virtual int NumAxes(const onnx::NodeProto& node) const = 0;
  // The recorded type of `name`, or null.
  virtual const onnx::TypeProto* Find(const std::string& name) const = 0;
  // The initializer (or Constant value) `name`, or null.
  virtual const onnx::TensorProto* FindInitializer(
      const std::string& name) const = 0;
};

// The domain whose nodes an entry's shape rule applies to.
enum class RuleDomain { kOnnx, kMicrosoft, kMl };

using ShapeRuleFn = std::vector<DerivedOutput> (*)(const RuleNode& n);
// One ElemRank per output of `node` (fewer: the rest unknown).
using TypeRuleFn = std::vector<ElemRank> (*)(const TypeQuery& q,
                                             const onnx::NodeProto& node);

struct OpRule {
  const char* op;
  RuleDomain domain;  // of `shape`
  ShapeRuleFn shape;  // null: no shape rule
  TypeRuleFn type;    // null: no type rule
};

// Every entry, in the table's order (for tests and documentation).
const std::vector<OpRule>& AllOpRules();

// The entry of `op`, or null.
const OpRule* FindOpRule(const std::string& op);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_OP_RULES_H_
