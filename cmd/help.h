// The CLI's help and argument hygiene for people who type fast (issue 16,
// point 5): help wrapped to the terminal, required options first and the
// exit codes once; `autoshard help [SUBCOMMAND]`; the underscore spelling of
// every long option (PopRT's `--num_ipus`) as an alias; `--input-shape A:..
// B:..` after one flag, as onnxsim takes it; "did you mean" for an unknown
// option or subcommand. main.cc calls these around CLI11's parse.
#ifndef AUTOSHARD_CMD_HELP_H_
#define AUTOSHARD_CMD_HELP_H_

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace autoshard::cmd {

// Columns to wrap help to: the terminal's width when stdout is one (at
// least 40), else 80.
size_t HelpColumns();

// `text` with each line longer than `columns` broken at spaces; the
// continuation lines indented by the line's own indent plus `hang`.
std::string WrapText(const std::string& text, size_t columns, size_t hang);

// Where the .proto schemas are: <prefix>/share/autoshard beside the
// installed executable (<prefix>/bin/autoshard), else the source tree's
// proto/ (a build tree's executable), else the configured install folder.
std::string SchemaDir();

// The help's second section: options a first reading can skip.
inline constexpr char kAdvancedGroup[] = "Advanced options";
// Puts every optional option of `sub` whose long name ("--plan"), short
// name ("-q") or positional name is not in `common` under kAdvancedGroup:
// the help lists the common ones first (issue 32).
void SetAdvancedOptions(CLI::App* sub, const std::set<std::string>& common);

// Sets the help formatter of `app`; call before adding subcommands (they
// inherit it). The exit-code paragraph `exit_codes` is removed from every
// description and footer and printed once, last; the subcommands that make
// no plan of a model (split, calibrate, devices) print `no_plan_exit_codes`
// instead.
void InstallHelpFormatter(CLI::App* app, const std::string& exit_codes,
                          const std::string& no_plan_exit_codes);

// The arguments (argv[1..]) rewritten for CLI11: `--a_b[=V]` becomes
// `--a-b[=V]` when that is an option of the subcommand (or of `app`), and
// every NAME:D1,D2,... after `--input-shape X` gets its own
// `--input-shape`. Nothing after a bare `--` changes.
std::vector<std::string> NormalizeArgs(const CLI::App& app,
                                       const std::vector<std::string>& args);

// The error for an unknown subcommand or long option in `args` (normalized),
// with the closest known name: "unknown option '--num-ipu' for 'shard';
// did you mean --num-ipus?". nullopt when every name is known.
std::optional<std::string> UnknownNameError(
    const CLI::App& app, const std::vector<std::string>& args);

// `autoshard help [SUBCOMMAND]`: prints the help on stdout and returns 0, or
// 2 with an error for an unknown subcommand. nullopt when args[0] is not
// "help".
std::optional<int> RunHelpCommand(const CLI::App& app,
                                  const std::vector<std::string>& args);

}  // namespace autoshard::cmd

#endif  // AUTOSHARD_CMD_HELP_H_
