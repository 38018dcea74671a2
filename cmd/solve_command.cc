// `autoshard solve PROBLEM.json`: shard's planner and its certified bound on
// a problem file (share/autoshard/problem.proto; sharder/problem_file.h), for
// compilers that are not ONNX and for replaying `shard --write-problem`.
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "cmd/commands.h"
#include "graph/model_io.h"
#include "sharder/problem_file.h"
#include "writers/emit.h"

namespace autoshard::cmd {

CLI::App* SetupSolve(CLI::App& app, SolveCommandOptions* o) {
  CLI::App* sub = app.add_subcommand(
      "solve",
      "plan a problem file (share/autoshard/problem.proto) instead of a model");
  sub->footer(
      "Examples:\n"
      "  autoshard solve problem.json\n"
      "  autoshard solve problem.json --num-ipus 4 --plan plan.json\n"
      "  autoshard solve problem.json -n auto --strategy optimal\n"
      "The planner is shard's: the same strategies, budgets and report; "
      "`shard MODEL --write-problem p.json` then `solve p.json` gives shard's "
      "split.\n");
  sub->add_option("problem", o->problem, "problem file (JSON)")->required();
  sub->add_option("-n,--num-ipus", o->num_ipus,
                  "number of IPUs, or auto: the smallest power of two (1, 2, "
                  "4, ... --max-ipus) whose split fits (default: the file's "
                  "num_ipus)");
  sub->add_option("--max-ipus", o->library.max_ipus,
                  "--num-ipus auto tries 1, 2, 4, ... up to this (default "
                  "256, at most 1024)");
  AddStrategyFlags(sub, &o->library);
  sub->add_option("--plan", o->plan, "write the plan (JSON) here");
  sub->add_option("--report", o->report,
                  "text (default), or json: the plan without its per-node "
                  "placements as JSON on stdout, for piping")
      ->check(CLI::IsMember({"text", "json"}));
  CLI::Option* quiet = sub->add_flag("-q,--quiet", o->quiet, kQuietHelp);
  sub->add_flag("-v,--verbose", o->verbose, "every IPU in the report")
      ->excludes(quiet);
  return sub;
}

namespace {

// The library options of `o` for `loaded` (--num-ipus parsed, the file's
// count when not given), validated.
absl::StatusOr<Options> SolveOptions(const SolveCommandOptions& o,
                                     const LoadedProblem& loaded) {
  Options options = o.library;
  options.num_ipus = loaded.num_ipus;
  if (!o.num_ipus.empty()) {
    ASSIGN_OR_RETURN(options.num_ipus, ParseNumIpus(o.num_ipus));
  }
  if (options.num_ipus > loaded.problem.num_nodes()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--num-ipus ", options.num_ipus, " exceeds the problem's ",
                     loaded.problem.num_nodes(), " nodes"));
  }
  RETURN_IF_ERROR(options.Validate());
  return options;
}

}  // namespace

int RunSolve(const SolveCommandOptions& o) {
  if (absl::Status s = o.library.Validate(); !s.ok()) return ReportError(s);
  auto loaded = ReadProblemFile(o.problem);
  if (!loaded.ok()) return ReportError(loaded.status());
  auto options = SolveOptions(o, *loaded);
  if (!options.ok()) return ReportError(options.status());
  auto plan = SolveProblem(*loaded, *options);
  if (!plan.ok()) return ReportError(plan.status());
  plan->proto.set_model(o.problem);
  if (!o.plan.empty()) {
    if (absl::Status s = WriteFileAtomically(o.plan, PlanJson(plan->proto));
        !s.ok()) {
      return ReportError(s);
    }
  }
  if (o.report == "json") {  // printed with -q too (kQuietHelp)
    proto::Plan summary = plan->proto;
    summary.clear_nodes();
    *CurrentConsole().out << ProtoJson(summary);
  } else if (!o.quiet) {
    *CurrentConsole().out << ReportText(plan->proto, o.verbose);
  }
  return plan->proto.fits() ? kExitOk : kExitNoFit;
}

}  // namespace autoshard::cmd
