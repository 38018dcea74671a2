// A small instrumentation hook: how many times this thread ran each costly
// step of the pipeline, so that a test can check that one run does each once
// (counts, not timing; sharder/library_test.cc). Per thread, so runs on other
// threads (batch mode, the library's concurrent callers) never mix in; the
// counts change no result.
#ifndef AUTOSHARD_GRAPH_STEP_COUNTS_H_
#define AUTOSHARD_GRAPH_STEP_COUNTS_H_

#include <cstdint>

namespace autoshard {

struct StepCounts {
  int64_t node_namings = 0;     // AssignNodeNames (graph/naming.h)
  int64_t dag_builds = 0;       // Graph::Build (graph/graph.h)
  int64_t onnx_inferences = 0;  // InferShapes (graph/shapes.h), any model
  // Nodes whose ONNX inference function ran on its own, outside a
  // whole-model InferShapes (graph/fixed_shapes.h).
  int64_t node_reinferences = 0;
  int64_t plan_evaluations = 0;  // EvaluatePlan (costmodel/plan_evaluation.h)
};

// The calling thread's counts; a test resets them with `= StepCounts()`.
inline StepCounts& ThreadStepCounts() {
  thread_local StepCounts counts;
  return counts;
}

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_STEP_COUNTS_H_
