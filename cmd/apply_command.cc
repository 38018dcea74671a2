#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "cmd/commands.h"
#include "sharder/outputs/emit.h"

namespace autoshard::cmd {

CLI::App* SetupApply(CLI::App& app, ApplyOptions* o) {
  CLI::App* sub = app.add_subcommand(
      "apply",
      "annotate a model from a PopRT manual-sharding YAML (PopRT's semantics)");
  sub->footer(
      "Examples:\n"
      "  autoshard apply model.onnx --sharding-config s.yaml -o out.onnx\n"
      "  autoshard apply model.onnx --sharding-config s.yaml -o out.onnx "
      "--plan plan.json\n" +
      std::string(kExitCodesHelp));
  AddModelFlags(sub, &o->model);
  sub->add_option("--sharding-config", o->sharding_config,
                  "YAML list of {node: NAME, device: I, stage: S}")
      ->required();
  sub->add_option("-o,--output", o->output, "annotated model")->required();
  return sub;
}

int RunApply(const ApplyOptions& o) {
  auto options = ToLibraryOptions(o.model);
  if (!options.ok()) return ReportError(options.status());
  std::error_code ec;
  if (!std::filesystem::exists(o.sharding_config, ec)) {
    return ReportError(
        absl::NotFoundError(absl::StrCat(o.sharding_config, ": no such file")));
  }
  if (!std::filesystem::is_regular_file(o.sharding_config, ec)) {
    return ReportError(absl::InvalidArgumentError(
        absl::StrCat(o.sharding_config, ": not a regular file")));
  }
  std::ifstream in(o.sharding_config);
  if (!in) {
    return ReportError(absl::PermissionDeniedError(
        absl::StrCat(o.sharding_config, ": cannot read the sharding config")));
  }
  std::stringstream text;
  text << in.rdbuf();
  auto points = ParseShardingConfigYaml(text.str(), o.sharding_config);
  if (!points.ok()) return ReportError(points.status());
  auto loaded = LoadModelReported(o.model);
  if (!loaded.ok()) return ReportError(loaded.status());
  auto start = std::chrono::steady_clock::now();
  auto plan = PlanFromShardingPoints(loaded->model, *options, *points);
  if (!plan.ok()) {
    return ReportError(
        absl::Status(plan.status().code(),
                     absl::StrCat(o.model.model, " with ", o.sharding_config,
                                  ": ", plan.status().message())));
  }
  ReportStep(o.model, "applied the sharding config", start);
  plan->proto.set_model(o.model.model);
  return WriteOutputs(o.model, &*loaded, o.output, /*sharding_config_out=*/"",
                      /*inputs=*/{o.sharding_config}, *plan);
}

}  // namespace autoshard::cmd
