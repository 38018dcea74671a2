// Internals of the shape propagation pass (shape_propagation.h), shared by
// shape_propagation.cc (the sweep over a graph: values, ONNX's inference,
// rules, writing back) and shape_propagation_control.cc (If, Loop, Scan).
// Not part of the interface.
#ifndef AUTOSHARD_GRAPH_SHAPE_PROPAGATION_INTERNAL_H_
#define AUTOSHARD_GRAPH_SHAPE_PROPAGATION_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "graph/shape_propagation.h"
#include "graph/shape_rules.h"
#include "graph/shape_values.h"
#include "graph/shapes.h"
#include "onnx/onnx_pb.h"

namespace autoshard::propagation_internal {

// Float constants (initializers, Constant values) are kept as values up to
// this many elements: shape arithmetic uses float scalars and short vectors
// (scales), never float tensors of thousands of elements (weights).
constexpr int64_t kMaxFloatConstantElements = 64;

// Trip counts from 2^31 on are exporters' "until the condition is false"
// (as for the Loop FLOPs rule, flops_rules.h).
constexpr int64_t kMaxTripCount = (int64_t{1} << 31) - 1;

// Loop and Scan bodies are run again at most this many times while the
// shapes of their loop-carried values settle.
constexpr int kMaxBodyReruns = 3;

// What is known of a sequence value: its elements' common shape (a dim
// where they differ is unknown) and its length.
struct SequenceInfo {
  TensorInfo elem;      // rank_known false: unknown (or no element yet)
  int64_t length = -1;  // -1: unknown
};

// Note [Scopes]
// A body (an If branch, a Loop or Scan body) sees the names of every graph
// that encloses it, and the names it defines itself shadow the enclosing
// ones. A Scope is one graph's tables plus a pointer to the enclosing graph's
// Scope; a lookup tries the innermost table first and walks outwards. Analysing
// or costing a body therefore costs time proportional to the body (times the
// nesting depth per lookup), never to the size of the enclosing graphs: copying
// the enclosing table per body made a chain of n If nodes O(n^2). A Scope does
// not own its tables; they and the parent must outlive it.
//
// One graph's tables: what is known of the names it defines, with a pointer
// to the enclosing graph's tables (lookups walk outwards, Note [Scopes]). A
// body's scope and its own bodies' scopes are kept until the whole pass
// commits, so a Loop body run again simply drops the first run's scope.
struct GraphScope {
  explicit GraphScope(const GraphScope* parent) : parent(parent) {}

  const TensorInfo* FindInfo(const std::string& name) const {
    for (const GraphScope* s = this; s != nullptr; s = s->parent) {
      auto it = s->infos.find(name);
      if (it != s->infos.end()) return &it->second;
    }
    return nullptr;
  }
  const ShapeValue* FindValue(const std::string& name) const {
    for (const GraphScope* s = this; s != nullptr; s = s->parent) {
      auto it = s->values.find(name);
      if (it != s->values.end()) return &it->second;
      if (s->infos.contains(name)) return nullptr;  // defined here, no value
    }
    return nullptr;
  }

  const SequenceInfo* FindSequence(const std::string& name) const {
    for (const GraphScope* s = this; s != nullptr; s = s->parent) {
      auto it = s->sequences.find(name);
      if (it != s->sequences.end()) return &it->second;
      if (s->infos.contains(name)) return nullptr;  // defined here, unknown
    }
    return nullptr;
  }

  const GraphScope* parent;
  TensorInfoMap infos;
  absl::flat_hash_map<std::string, ShapeValue> values;
  absl::flat_hash_map<std::string, SequenceInfo> sequences;
  // Names whose info became more complete, in the order they did.
  std::vector<std::string> changed;
  absl::flat_hash_set<std::string> changed_set;
  std::vector<ShapeAssumption> assumptions;
  // Bodies of this graph's nodes, committed with it.
  std::vector<std::pair<onnx::GraphProto*, std::unique_ptr<GraphScope>>>
      children;
};

// `in` with every dim that `out` does not share with it unknown (the rank
// unknown when the ranks differ): the shape of a loop-carried value that
// holds in every iteration.
TensorInfo Generalize(const TensorInfo& in, const TensorInfo* out);

// True when `a` and `b` have the same rank and dims.
bool SameInfo(const TensorInfo& a, const TensorInfo& b);

// What `a` and `b` share: the element type of either, their dims where they
// agree (else unknown), an unknown rank when their ranks differ.
TensorInfo CommonInfo(const TensorInfo& a, const TensorInfo& b);

// Body input name -> what is known of the sequence it receives.
using SequenceInputs = absl::flat_hash_map<std::string, SequenceInfo>;

// Visits graphs and writes back what it learns (Note [Shape propagation]).
class Propagator {
 public:
  explicit Propagator(const onnx::ModelProto& model);

  // Visits `g`'s nodes (the scope holds its names' infos already).
  void RunGraph(onnx::GraphProto* g, GraphScope* scope,
                const std::string& prefix);

  // Writes what `scope` (and its bodies) learnt into `g`'s value_info.
  void Commit(onnx::GraphProto* g, GraphScope* scope,
              ShapePropagationResult* result);

 private:
  int Opset(const std::string& domain) const;

  // Makes `name`'s info (a name this scope defines) more complete with
  // `from`; returns the dims it filled in (all of them when the rank became
  // known).
  std::vector<int> Merge(const std::string& name, const TensorInfo& from,
                         GraphScope* scope);

  // Merge, recording an assumption for each filled dim `out` bounds.
  void MergeDerived(const onnx::NodeProto& node, int slot,
                    const DerivedOutput& out, const std::string& label,
                    GraphScope* scope);

  // True when an output of `node` is a tensor without a static shape.
  static bool NeedsShape(const onnx::NodeProto& node, const GraphScope& scope);

  void ProcessNode(onnx::NodeProto* node, GraphScope* scope,
                   const std::string& label);

  // False when evaluating `node` cannot give anything: it has inputs, none
  // with a known value, and it is not Shape or Size (which read shapes).
  static bool CanEvaluate(const onnx::NodeProto& node, const GraphScope& scope);

  void Evaluate(const onnx::NodeProto& node, GraphScope* scope);

  // Runs the op's ONNX inference function with the inputs' current shapes
  // and known values.
  void InferWithOnnx(onnx::NodeProto* node, GraphScope* scope);

  // A scope for `body` whose inputs are `inputs` (as many as given), run.
  // `declared`: a dim `inputs` does not know takes the body's declared one.
  // `sequences`: sequence-typed body inputs.
  std::unique_ptr<GraphScope> RunBody(
      onnx::GraphProto* body, const GraphScope* parent,
      const std::vector<TensorInfo>& inputs, bool declared,
      const std::string& label, const SequenceInputs* sequences = nullptr);

  // Sequence ops (shape_propagation_sequences.cc): SequenceEmpty,
  // SequenceConstruct, SequenceInsert, SequenceErase, SequenceAt,
  // SequenceLength, SplitToSequence, ConcatFromSequence. False for other ops.
  bool ProcessSequenceOp(const onnx::NodeProto& node, GraphScope* scope);

  // If, Loop, Scan (shape_propagation_control.cc).
  // The graph attribute `name` of `node`, or nullptr.
  static onnx::GraphProto* Body(onnx::NodeProto* node, std::string_view name);

  void ProcessControlFlow(onnx::NodeProto* node, GraphScope* scope,
                          const std::string& label);

  void ProcessIf(onnx::NodeProto* node, GraphScope* scope,
                 const std::string& label);

  // Runs a Loop or Scan `body` whose inputs are `inputs`; inputs
  // [first, first + n) are loop-carried and become body outputs
  // [out_first, out_first + n). Runs again while their shapes change.
  std::unique_ptr<GraphScope> RunLoopBody(
      onnx::GraphProto* body, GraphScope* scope, std::vector<TensorInfo> inputs,
      int first, int n, int out_first, const std::string& label,
      const SequenceInputs* sequences = nullptr);

  // True when the Loop runs all its M trips: no condition, or a known-true
  // initial condition that the body passes on unchanged (or sets true).
  static bool RunsAllTrips(const onnx::NodeProto& node,
                           const onnx::GraphProto& body,
                           const GraphScope& outer, const GraphScope& run);

  void ProcessLoop(onnx::NodeProto* node, GraphScope* scope,
                   const std::string& label);

  void ProcessScan(onnx::NodeProto* node, GraphScope* scope,
                   const std::string& label);

  absl::flat_hash_map<std::string, int>
      opsets_;  // domain ("" default) -> opset
};

}  // namespace autoshard::propagation_internal

#endif  // AUTOSHARD_GRAPH_SHAPE_PROPAGATION_INTERNAL_H_
