// autoshard: splits ONNX models across several IPUs. See README.md.
#include "CLI/CLI.hpp"
#include "cmd/commands.h"

int main(int argc, char** argv) {
  using namespace autoshard::cmd;
  CLI::App app(
      "autoshard: split an ONNX model over several IPUs so each part fits and "
      "the "
      "pipeline runs fast.\nExit codes: 0 ok, 1 internal error, 2 bad usage or "
      "input, 3 does not fit.",
      "autoshard");
  app.set_version_flag("--version", "autoshard 0.1.0");
  app.require_subcommand(1);
  ShardOptions shard;
  ApplyOptions apply;
  SetupShard(app, &shard);
  SetupApply(app, &apply);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& done) {
    return done.get_exit_code();  // a subcommand ran; this is its exit code
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  return kExitOk;
}
