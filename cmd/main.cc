// autoshard: splits ONNX models across several IPUs. See README.md.
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "base/step_counts.h"
#include "cmd/commands.h"
#include "cmd/devices_command.h"
#include "cmd/help.h"
#include "cmd/isolate.h"
#include "cmd/progress.h"

int main(int argc, char** argv) {
  using namespace autoshard::cmd;
  // A write past the file-size limit (ulimit -f) then fails with EFBIG, is
  // reported, and its temporary file removed, instead of SIGXFSZ ending the
  // process with the temporary file in place.
  signal(SIGXFSZ, SIG_IGN);
  // Ctrl-C says what was left as it was (a batch's child is stopped by its
  // parent, which says it).
  if (!InBatchChild()) InstallInterruptLine();
  CLI::App app(
      "autoshard: split an ONNX model over several IPUs so each part fits and "
      "the pipeline runs fast.\n" +
          std::string(kExitCodesHelp),
      "autoshard");
  // Before the subcommands; split, calibrate and devices make no plan.
  InstallHelpFormatter(&app, kExitCodesHelp, kExitCodesNoPlanHelp);
  app.set_version_flag("--version", "autoshard " AUTOSHARD_VERSION);
  app.footer(
      "Examples:\n"
      "  autoshard shard model.onnx --num-ipus 4\n"
      "  autoshard shard models/ --num-ipus 2 --out-dir out --jobs 2 "
      "--summary out/summary.csv\n"
      "  autoshard inspect model.onnx --batch-size 1\n"
      "  autoshard shard model.onnx -n auto --total-ipus 256 --plan p.json\n"
      "  autoshard launch p.json --hosts a,b --partition p256 -- prog\n"
      "Run 'autoshard help SUBCOMMAND' for a subcommand's options.");
  app.require_subcommand(1);
  ShardOptions shard;
  ApplyOptions apply;
  InspectOptions inspect;
  SplitOptions split;
  CalibrateOptions calibrate;
  LaunchCommandOptions launch;
  SolveCommandOptions solve;
  CLI::App* shard_cmd = SetupShard(app, &shard);
  CLI::App* apply_cmd = SetupApply(app, &apply);
  CLI::App* inspect_cmd = SetupInspect(app, &inspect);
  CLI::App* split_cmd = SetupSplit(app, &split);
  CLI::App* calibrate_cmd = SetupCalibrate(app, &calibrate);
  CLI::App* launch_cmd = SetupLaunch(app, &launch);
  CLI::App* solve_cmd = SetupSolve(app, &solve);
  DevicesOptions devices;
  CLI::App* devices_cmd = SetupDevices(app, &devices);
  // cmd/help.h: `help [SUBCOMMAND]`, --num_ipus, --input-shape A B, and
  // "did you mean" (CLI11 would only say "A subcommand is required").
  std::vector<std::string> args(argv + 1, argv + argc);
  if (std::optional<int> code = RunHelpCommand(app, args)) return *code;
  args = NormalizeArgs(app, args);
  if (std::optional<std::string> error = UnknownNameError(app, args)) {
    std::cerr << "autoshard: error: " << *error << "\n";
    return kExitBadInput;
  }
  try {
    std::reverse(args.begin(), args.end());  // CLI11 takes them reversed
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "autoshard: error: " << e.what()
              << "\n(run 'autoshard help' or 'autoshard help SUBCOMMAND')\n";
    return kExitBadInput;
  }
  std::string command_line = "autoshard";
  for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];
  for (ModelOptions* o : {&shard.model, &apply.model, &inspect.model})
    o->command_line = command_line;
  const auto run = [&]() -> int {
    if (shard_cmd->parsed()) return RunShard(shard);
    if (apply_cmd->parsed()) return RunApply(apply);
    if (inspect_cmd->parsed()) return RunInspect(inspect);
    if (split_cmd->parsed()) return RunSplit(split);
    if (calibrate_cmd->parsed()) return RunCalibrate(calibrate);
    if (launch_cmd->parsed()) return RunLaunch(launch);
    if (solve_cmd->parsed()) return RunSolve(solve);
    if (devices_cmd->parsed()) return RunDevices(devices);
    return kExitBadInput;
  };
  const int code = run();
  // How often this (main) thread ran each costly step: a diagnostic for
  // tests (tests/step_counts_cli_test.sh), off unless asked for.
  if (const char* env = std::getenv("AUTOSHARD_STEP_COUNTS");
      env != nullptr && std::string(env) == "1") {
    std::cerr << autoshard::StepCountsText(autoshard::ThreadStepCounts());
  }
  return code;
}
