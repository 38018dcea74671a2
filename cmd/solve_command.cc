// `autoshard solve PROBLEM.json`: the partitioner and its certified bound on
// a problem file (share/autoshard/problem.proto; sharder/problem_file.h), for
// compilers that are not ONNX and for replaying `shard --write-problem`.
#include <chrono>

#include "absl/strings/str_cat.h"
#include "cmd/commands.h"
#include "graph/model_io.h"
#include "sharder/outputs/emit.h"
#include "sharder/problem_file.h"

namespace autoshard::cmd {

CLI::App* SetupSolve(CLI::App& app, SolveCommandOptions* o) {
  CLI::App* sub = app.add_subcommand(
      "solve",
      "plan a problem file (share/autoshard/problem.proto) instead of a model");
  sub->footer(
      "Examples:\n"
      "  autoshard solve problem.json\n"
      "  autoshard solve problem.json --num-ipus 4 --plan plan.json\n");
  sub->add_option("problem", o->problem, "problem file (JSON)")->required();
  sub->add_option("--num-ipus", o->num_ipus,
                  "replaces the file's num_ipus when given");
  sub->add_option("--plan", o->plan, "write the plan (JSON) here");
  sub->add_option("--report", o->report, "text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  sub->add_flag("-q,--quiet", o->quiet, kQuietHelp);
  sub->add_option("--max-search-seconds", o->max_search_s,
                  absl::StrCat("seconds the DPs may spend (default ",
                               kDefaultMaxSearchSeconds, ")"));
  sub->add_option("--bound-seconds", o->bound_s,
                  "seconds the certified bound may take (default 10; 0: the "
                  "cheap bound)");
  return sub;
}

int RunSolve(const SolveCommandOptions& o) {
  auto loaded = ReadProblemFile(o.problem);
  if (!loaded.ok()) return ReportError(loaded.status());
  if (o.num_ipus > 0) {
    if (o.num_ipus > loaded->problem.num_nodes()) {
      return ReportError(absl::InvalidArgumentError(
          absl::StrCat("--num-ipus ", o.num_ipus, " exceeds the problem's ",
                       loaded->problem.num_nodes(), " nodes")));
    }
    loaded->num_ipus = o.num_ipus;
  }
  if (!(o.max_search_s > 0) || !(o.bound_s >= 0)) {
    return ReportError(absl::InvalidArgumentError(
        "--max-search-seconds must be positive, --bound-seconds 0 or more"));
  }
  auto plan = SolveProblem(*loaded, {o.max_search_s, o.bound_s});
  if (!plan.ok()) return ReportError(plan.status());
  plan->set_model(o.problem);
  if (!o.plan.empty()) {
    if (absl::Status s = WriteFileAtomically(o.plan, PlanJson(*plan));
        !s.ok()) {
      return ReportError(s);
    }
  }
  if (o.report == "json") {
    *CurrentConsole().out << PlanJson(*plan);
  } else if (!o.quiet) {
    *CurrentConsole().out << ReportText(*plan);
  }
  return plan->fits() ? kExitOk : kExitNoFit;
}

}  // namespace autoshard::cmd
