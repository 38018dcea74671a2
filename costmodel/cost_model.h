// Per-node costs of a model: FLOPs, weight bytes, output activation bytes,
// op class and temporary memory.
//
// FLOPs count 2 per multiply-accumulate (DESIGN.md §3.1); the rules and the
// op classes are in flops_rules.h and documented there. Weights are the
// initializers, Constant node values and outputs of constant-foldable chains
// a node reads (Note [Constants and weights] in cost_model.cc); a weight read
// by several nodes is one weight (ModelCosts::weights), so a plan can count
// it once per IPU that reads it.
#ifndef AUTOSHARD_COSTMODEL_COST_MODEL_H_
#define AUTOSHARD_COSTMODEL_COST_MODEL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "costmodel/precision.h"
#include "costmodel/problem.h"
#include "graph/graph.h"
#include "graph/shapes.h"

namespace autoshard {

struct CostOptions {
  // kFp16: FLOAT (and DOUBLE) tensors are costed at 2 bytes an element, as
  // PopRT converts models to fp16 before compiling.
  Precision precision = Precision::kFp32;
};

// One constant tensor (initializer, Constant value or folded chain output).
struct Weight {
  std::string name;
  int64_t size_bytes = 0;
  // Elements (parameters); 0 for the constants of If/Loop/Scan bodies, which
  // are one weight per node and counted in bytes only.
  int64_t num_elements = 0;
  // Floating point (float, double, float16, bfloat16): what PopART makes a
  // variable when weights are not constant; integer shapes and axes stay
  // constants (ops such as Reshape need them at compile time).
  bool floating = false;
};

struct NodeCost {
  double flops = 0;              // 2 per MAC, plus the op's other arithmetic
  double macs = 0;               // MACs of Conv/ConvTranspose/MatMul/Gemm/...
  int64_t activation_bytes = 0;  // sum over non-constant outputs, elems x size
  // Per output slot (node.output(i)): elems x size; 0 for an empty name or a
  // tensor of unknown type. Empty for constant nodes.
  std::vector<int64_t> output_bytes;
  bool has_flops_rule = true;  // false: fallback rule (output elements)
  bool shapes_known = true;    // false: some input/output dim was unknown
  // False when an output that is a tensor (not a sequence, map or optional)
  // has no static shape (graph/shape_propagation.h could not find one).
  bool output_shapes_static = true;
  bool is_constant = false;  // Constant node or constant-foldable chain
  // OpClassName(ClassifyOp(node)): "matmul", "conv", "elementwise",
  // "normalization", "reduction", "data_movement", "control_flow" or "other"
  // (flops_rules.h; the rule table in flops_rules.cc classes every op).
  std::string op_class = "other";
  // Scratch memory of a "matmul" or "conv" node while it runs, before the
  // available-memory-proportion cap (DESIGN.md §3.3; the tile-memory model
  // applies the cap). An estimate of what Poplar's convolution/matmul planner
  // allocates, not its plan:
  //   temporary_bytes = elements(output 0) x 4     (fp32 partial sums)
  //                   + elements(input 0) x size   (a rearranged copy of the
  //                                                 activation input)
  // with size input 0's element size at the chosen precision and unknown
  // dims as 1. For the recurrent ops output 0 is Y (when present, else the
  // first output). 0 for every other class and for constant nodes.
  int64_t temporary_bytes = 0;
  // The largest output's elements x element size at the chosen precision
  // (the tile-memory model spreads an op over the tiles this needs). 0 for
  // constant nodes.
  int64_t largest_output_bytes = 0;
};

struct ModelCosts {
  std::vector<NodeCost> nodes;                     // indexed by NodeId
  std::vector<Weight> weights;                     // indexed by weight id
  std::vector<std::vector<int32_t>> node_weights;  // NodeId -> weight ids read
  // Number of distinct non-constant tensor inputs of each node (graph inputs
  // and outputs of non-constant nodes, implicit inputs included). PopRT's
  // sharding candidates are the nodes where this is > 1.
  std::vector<int32_t> num_activation_inputs;
  double total_flops = 0;
  int64_t total_weight_bytes = 0;             // each weight once
  std::vector<std::string> ops_without_rule;  // sorted op types, once each
  int64_t nodes_with_unknown_shapes = 0;
  // Loop/Scan nodes costed as their body once because the trip count is not
  // a known constant (the caller warns, DESIGN.md §3.1), in topological
  // order. A node nested in a body is written as the path of node names from
  // the main graph's node down ("outer > inner"; a body node without a name
  // is "<op type>#<index in its body>"). EstimateFlops (flops_rules.h) says
  // which trip counts are used.
  std::vector<std::string> loops_costed_once;
};

// Costs every node of `graph`. `tensors` gives shapes and element types (from
// CollectTensorInfo after inference); `graph_proto` is the GraphProto that
// `graph` was built from (for initializers).
absl::StatusOr<ModelCosts> ComputeCosts(const onnx::GraphProto& graph_proto,
                                        const Graph& graph,
                                        const TensorInfoMap& tensors,
                                        const CostOptions& options);

// Per node of `graph` (built from `graph_proto`): 1 when it is a constant
// node under Note [Constants and weights] (cost_model.cc): a Constant, or a
// default-domain node without bodies, not random, not DequantizeLinear, all
// of whose inputs are initializers or outputs of constant nodes.
std::vector<uint8_t> FindConstantNodes(const onnx::GraphProto& graph_proto,
                                       const Graph& graph);

// True for the op classes whose FLOPs grow with several dims at once
// ("matmul", "conv": Conv/ConvTranspose/MatMul/Gemm and kin), which a
// missing shape makes badly wrong.
bool IsHeavyOpClass(std::string_view op_class);

// Element size under `precision`: FLOAT and DOUBLE become 2 bytes with kFp16.
int64_t ElementSizeBytesAt(int32_t elem_type, Precision precision);

// Builds the problem of a model from its DAG and costs.
ShardingProblem MakeProblem(const Graph& graph, const ModelCosts& costs);

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_COST_MODEL_H_
