#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "cmd/commands.h"
#include "cmd/model_command.h"
#include "writers/emit.h"

namespace autoshard::cmd {

CLI::App* SetupApply(CLI::App& app, ApplyOptions* o) {
  CLI::App* sub = app.add_subcommand(
      "apply",
      "annotate a model from a PopRT manual-sharding YAML (PopRT's semantics)");
  sub->footer(
      "Examples:\n"
      "  autoshard apply model.onnx --sharding-config s.yaml -o out.onnx\n"
      "  autoshard apply model.onnx --sharding-config s.yaml -o out.onnx "
      "--plan plan.json\n");
  AddModelFlags(sub, &o->model);
  sub->add_option("--sharding-config", o->sharding_config,
                  "YAML list of {node: NAME, device: I, stage: S}")
      ->required();
  sub->add_option("-o,--output", o->output, "annotated model")->required();
  return sub;
}

namespace {

// The sharding config's points (apply's input, read before the model).
absl::StatusOr<std::vector<NamedShardingPoint>> ReadShardingConfig(
    const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return absl::NotFoundError(absl::StrCat(path, ": no such file"));
  }
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file"));
  }
  std::ifstream in(path);
  if (!in) {
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot read the sharding config"));
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseShardingConfigYaml(text.str(), path);
}

}  // namespace

int RunApply(const ApplyOptions& o) {
  absl::StatusOr<std::vector<NamedShardingPoint>> points;
  ModelCommand<Plan> apply;
  apply.prepare = [&] {
    points = ReadShardingConfig(o.sharding_config);
    return points.status();
  };
  apply.run = [&](const LoadedModel& loaded, Options& options) {
    return PlanFromShardingPoints(loaded.model, options, *points);
  };
  apply.context = " with " + o.sharding_config;
  apply.step = [](const Plan&) { return "applied the sharding config"; };
  apply.report = [&o](LoadedModel& loaded, Plan& plan) {
    plan.proto.set_model(o.model.model);
    return WriteOutputs(o.model, &loaded, o.output,
                        /*sharding_config_out=*/"",
                        /*inputs=*/{o.sharding_config}, plan);
  };
  return RunModelCommand(o.model, apply);
}

}  // namespace autoshard::cmd
