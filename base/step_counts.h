// A small instrumentation hook: how many times this thread ran each costly
// step of the pipeline, so that a test can check that one run does each once
// (counts, not timing; sharder/library_test.cc). Per thread, so runs on other
// threads (batch mode, the library's concurrent callers) never mix in; the
// counts change no result.
#ifndef AUTOSHARD_BASE_STEP_COUNTS_H_
#define AUTOSHARD_BASE_STEP_COUNTS_H_

#include <cstdint>
#include <string>

namespace autoshard {

struct StepCounts {
  int64_t node_namings = 0;  // AssignNodeNames (graph/naming.h)
  int64_t dag_builds = 0;    // Graph::Build (graph/graph.h)
  // Every whole-model run of ONNX's inference goes through RunOnnxInference
  // (graph/onnx_inference.h), which counts it in one of onnx_inferences,
  // dim_checks and stage_inferences by its purpose.
  int64_t onnx_inferences = 0;  // InferShapes (graph/shapes.h), any model
  // ONNX's inference in error mode at the options' dims (graph/
  // dim_conflicts.h): once when the options change an input's dims, a
  // second time only when it finds a conflict.
  int64_t dim_checks = 0;
  // Nodes whose ONNX inference function ran on its own, outside a
  // whole-model InferShapes (graph/fixed_shapes.h).
  int64_t node_reinferences = 0;
  // Every single-node run of ONNX's inference (InferNodeWithOnnx,
  // graph/onnx_inference.h): the fixed-dims inference's and the shape
  // propagation pass's.
  int64_t node_inferences = 0;
  int64_t plan_evaluations = 0;  // EvaluatePlan (costmodel/plan_evaluation.h)
  // FindConstantNodes (costmodel/cost_model.h): the constant mask.
  int64_t constant_masks = 0;
  // LoadDeviceProfile (costmodel/device_profile.h), a built-in or a file
  // (its base, when it names one, is part of the same load).
  int64_t profile_loads = 0;
  // DeviceModel constructions (costmodel/device_model.h), any problem.
  int64_t device_models = 0;
  // ONNX's strict inference of one per-stage model, as the split folder's
  // check runs it (writers/split/split_write.cc): once per stage written
  // (counted before the model guard, as the other two).
  int64_t stage_inferences = 0;
};

// The calling thread's counts; a test resets them with `= StepCounts()`.
inline StepCounts& ThreadStepCounts() {
  thread_local StepCounts counts;
  return counts;
}

// `counts` as one "step_count NAME N" line per counter, for
// AUTOSHARD_STEP_COUNTS=1 (cmd/main.cc prints it on stderr) and tests.
inline std::string StepCountsText(const StepCounts& counts) {
  std::string text;
  const auto line = [&text](const char* name, int64_t n) {
    text += std::string("step_count ") + name + " " + std::to_string(n) + "\n";
  };
  line("node_namings", counts.node_namings);
  line("dag_builds", counts.dag_builds);
  line("onnx_inferences", counts.onnx_inferences);
  line("dim_checks", counts.dim_checks);
  line("node_reinferences", counts.node_reinferences);
  line("node_inferences", counts.node_inferences);
  line("plan_evaluations", counts.plan_evaluations);
  line("constant_masks", counts.constant_masks);
  line("profile_loads", counts.profile_loads);
  line("device_models", counts.device_models);
  line("stage_inferences", counts.stage_inferences);
  return text;
}

}  // namespace autoshard

#endif  // AUTOSHARD_BASE_STEP_COUNTS_H_
