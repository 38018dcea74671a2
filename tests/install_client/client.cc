// A client of the installed library (tests/install_test.sh): plans a model
// in memory, applies the plan, and does the same through the serialized-bytes
// overload. Usage: autoshard_client MODEL.onnx. Prints one line per step;
// exits non-zero on any error or disagreement.
#include <autoshard/autoshard.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

// The annotation a node got: "ipu/stage", or "" if none.
std::string Placement(const onnx::NodeProto& node) {
  std::string ipu, stage;
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == "__ipu_number") ipu = std::to_string(a.i());
    if (a.name() == "__pipeline_stage") stage = std::to_string(a.i());
  }
  return ipu.empty() || stage.empty() ? "" : ipu + "/" + stage;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: autoshard_client MODEL.onnx\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  onnx::ModelProto model;
  if (!in || !model.ParseFromString(bytes.str())) {
    std::cerr << argv[1] << ": cannot read the model\n";
    return 2;
  }

  // Plan, then annotate the model in memory.
  autoshard::Options options;
  options.num_ipus = 2;
  options.shapes.batch_size = 1;
  absl::StatusOr<autoshard::Plan> plan = autoshard::PlanModel(model, options);
  if (!plan.ok()) {
    std::cerr << "PlanModel: " << plan.status() << "\n";
    return 1;
  }
  if (absl::Status s = autoshard::ApplyPlan(*plan, &model); !s.ok()) {
    std::cerr << "ApplyPlan: " << s << "\n";
    return 1;
  }
  int on_ipu1 = 0;
  for (const onnx::NodeProto& node : model.graph().node()) {
    if (Placement(node).empty()) {
      std::cerr << "node " << node.name() << " is not annotated\n";
      return 1;
    }
    if (Placement(node) == "1/1") ++on_ipu1;
  }
  std::cout << "PlanModel: " << model.graph().node_size() << " nodes, "
            << on_ipu1
            << " on IPU 1, fits: " << (plan->proto.fits() ? "yes" : "no")
            << ", bottleneck " << plan->proto.performance().bottleneck_s() * 1e3
            << " ms\n";

  // The same through serialized bytes: the same annotations.
  autoshard::Plan bytes_plan;
  absl::StatusOr<std::string> annotated =
      autoshard::ShardModelBytes(bytes.str(), options, &bytes_plan);
  onnx::ModelProto from_bytes;
  if (!annotated.ok() || !from_bytes.ParseFromString(*annotated)) {
    std::cerr << "ShardModelBytes: " << annotated.status() << "\n";
    return 1;
  }
  for (int i = 0; i < model.graph().node_size(); ++i) {
    if (Placement(from_bytes.graph().node(i)) !=
        Placement(model.graph().node(i))) {
      std::cerr << "ShardModelBytes placed node " << i << " elsewhere\n";
      return 1;
    }
  }
  std::cout << "ShardModelBytes: " << annotated->size()
            << " bytes, the same placements\n";

  // Errors come back as a Status, never as an exception or output.
  absl::StatusOr<std::string> bad =
      autoshard::ShardModelBytes("not a model", options);
  std::cout << "bad bytes: " << bad.status().code() << "\n";
  return bad.ok() ? 1 : 0;
}
