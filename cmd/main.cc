// autoshard: splits ONNX models across several IPUs. See README.md.
#include <iostream>

#include "CLI/CLI.hpp"
#include "cmd/commands.h"

int main(int argc, char** argv) {
  using namespace autoshard::cmd;
  CLI::App app(
      "autoshard: split an ONNX model over several IPUs so each part fits and "
      "the pipeline runs fast.\n" +
          std::string(kExitCodesHelp),
      "autoshard");
  app.set_version_flag("--version", "autoshard " AUTOSHARD_VERSION);
  app.footer(
      "Examples:\n"
      "  autoshard shard model.onnx --num-ipus 4\n"
      "  autoshard shard models/ --num-ipus 2 --out-dir out --jobs 2 "
      "--summary out/summary.csv\n"
      "  autoshard inspect model.onnx --batch-size 1\n"
      "Run 'autoshard SUBCOMMAND --help' for a subcommand's options.");
  app.require_subcommand(1);
  ShardOptions shard;
  ApplyOptions apply;
  InspectOptions inspect;
  SplitOptions split;
  SolveCommandOptions solve;
  CLI::App* shard_cmd = SetupShard(app, &shard);
  CLI::App* apply_cmd = SetupApply(app, &apply);
  CLI::App* inspect_cmd = SetupInspect(app, &inspect);
  CLI::App* split_cmd = SetupSplit(app, &split);
  CLI::App* solve_cmd = SetupSolve(app, &solve);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr
        << "autoshard: error: " << e.what()
        << "\n(run 'autoshard --help' or 'autoshard SUBCOMMAND --help')\n";
    return kExitBadInput;
  }
  if (shard_cmd->parsed()) return RunShard(shard);
  if (apply_cmd->parsed()) return RunApply(apply);
  if (inspect_cmd->parsed()) return RunInspect(inspect);
  if (split_cmd->parsed()) return RunSplit(split);
  if (solve_cmd->parsed()) return RunSolve(solve);
  return kExitBadInput;
}
