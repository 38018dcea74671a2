#include "cmd/help.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <regex>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace autoshard::cmd {
namespace {

// Where an option's description starts in the help.
constexpr size_t kDescColumn = 30;

// `text` without `paragraph` (and the newline before it).
std::string Without(std::string text, const std::string& paragraph) {
  if (paragraph.empty()) return text;
  absl::StrReplaceAll({{"\n" + paragraph, ""}, {paragraph, ""}}, &text);
  return std::string(absl::StripTrailingAsciiWhitespace(text));
}

// The help of one app: description, usage, subcommands, the required
// arguments, the other options, the footer, then the exit codes once.
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter(std::string exit_codes, std::string no_plan_exit_codes)
      : exit_codes_(std::move(exit_codes)),
        no_plan_exit_codes_(std::move(no_plan_exit_codes)) {}

  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub)
      return CLI::Formatter::make_help(app, name, mode);
    const size_t columns = HelpColumns();
    std::string out;
    const std::string description =
        Without(app->get_description(), exit_codes_);
    if (!description.empty())
      absl::StrAppend(&out, WrapText(description, columns, 2), "\n");
    absl::StrAppend(&out, make_usage(app, name));
    absl::StrAppend(&out, Subcommands(app, columns));
    // Required first, then each group in the order of its first option
    // ("Options", then SetAdvancedOptions' "Advanced options").
    std::vector<const CLI::Option*> required;
    std::vector<std::pair<std::string, std::vector<const CLI::Option*>>> groups;
    for (const CLI::Option* opt : app->get_options()) {
      if (opt->get_group().empty()) continue;  // hidden
      if (opt->get_required()) {
        required.push_back(opt);
        continue;
      }
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
        return g.first == opt->get_group();
      });
      if (it == groups.end())
        it = groups.insert(groups.end(), {opt->get_group(), {}});
      it->second.push_back(opt);
    }
    if (!required.empty())
      absl::StrAppend(&out, "\nRequired:\n", Rows(required, columns));
    for (const auto& [group, opts] : groups)
      absl::StrAppend(&out, "\n", group, ":\n", Rows(opts, columns));
    const std::string footer = Without(app->get_footer(), exit_codes_);
    if (!footer.empty())
      absl::StrAppend(&out, "\n", WrapText(footer, columns, 4), "\n");
    // Subcommands that make no plan of a model cannot exit 3.
    const std::string name_of = app->get_name();
    const bool no_plan =
        name_of == "split" || name_of == "calibrate" || name_of == "devices";
    absl::StrAppend(
        &out, "\n",
        WrapText(absl::StrCat(no_plan ? no_plan_exit_codes_ : exit_codes_,
                              "\nSchemas of the JSON and text-proto files "
                              "(.proto): ",
                              SchemaDir(), "/"),
                 columns, 2),
        "\n");
    return out;
  }

 private:
  std::string Row(const std::string& label, const std::string& desc,
                  size_t columns) const {
    std::string out = WrapText("  " + label, columns, 4);
    const size_t width =
        columns > kDescColumn + 20 ? columns - kDescColumn : 20;
    const std::string wrapped = WrapText(desc, width, 0);
    bool first = true;
    for (absl::string_view line : absl::StrSplit(wrapped, '\n')) {
      if (first && out.size() + 1 < kDescColumn &&
          out.find('\n') == std::string::npos) {
        out.resize(kDescColumn, ' ');
      } else {
        absl::StrAppend(&out, "\n", std::string(kDescColumn, ' '));
      }
      absl::StrAppend(&out, line);
      first = false;
    }
    return out + "\n";
  }

  std::string Rows(const std::vector<const CLI::Option*>& opts,
                   size_t columns) const {
    std::string out;
    for (const CLI::Option* opt : opts) {
      const bool positional = opt->nonpositional() == false;
      std::string label =
          make_option_name(opt, positional) + make_option_opts(opt);
      absl::StrReplaceAll({{" REQUIRED", ""}}, &label);
      out += Row(label, opt->get_description(), columns);
    }
    return out;
  }

  std::string Subcommands(const CLI::App* app, size_t columns) const {
    const auto subs =
        app->get_subcommands([](const CLI::App*) { return true; });
    if (subs.empty()) return "";
    std::string out = "\nSubcommands:\n";
    for (const CLI::App* sub : subs)
      out += Row(sub->get_name(), sub->get_description(), columns);
    out +=
        Row("help [SUBCOMMAND]", "print this help, or a subcommand's", columns);
    return out;
  }

  std::string exit_codes_;
  std::string no_plan_exit_codes_;  // split, calibrate, devices
};

// Levenshtein distance (small strings).
size_t Distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The closest of `names` to `typed`, when close enough to be a typo (at most
// a third of its letters, at least 2), or a prefix of one; "" else.
std::string Closest(const std::string& typed,
                    const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, typed.size() / 3) + 1;
  for (const std::string& name : names) {
    size_t d = Distance(typed, name);
    if (typed.size() >= 3 && absl::StartsWith(name, typed)) d = 1;
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  return best;
}

// The subcommand `args` name (args[0]), or nullptr.
const CLI::App* SubcommandOf(const CLI::App& app,
                             const std::vector<std::string>& args) {
  if (args.empty()) return nullptr;
  for (const CLI::App* sub :
       app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->check_name(args[0])) return sub;
  }
  return nullptr;
}

// The long option names (without dashes) of `sub` and `app`.
std::vector<std::string> LongNames(const CLI::App& app, const CLI::App* sub) {
  std::vector<std::string> names;
  for (const CLI::App* a : {&app, sub}) {
    if (a == nullptr) continue;
    for (const CLI::Option* opt : a->get_options()) {
      for (const std::string& n : opt->get_lnames()) names.push_back(n);
    }
  }
  return names;
}

std::vector<std::string> SubcommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub :
       app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  names.push_back("help");
  return names;
}

}  // namespace

size_t HelpColumns() {
  struct winsize w {};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 &&
      w.ws_col > 0) {
    return std::max<size_t>(40, w.ws_col);
  }
  return 80;
}

std::string WrapText(const std::string& text, size_t columns, size_t hang) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const size_t indent = line.find_first_not_of(' ') == absl::string_view::npos
                              ? 0
                              : line.find_first_not_of(' ');
    std::string rest(line);
    const std::string prefix(indent + hang, ' ');
    size_t floor = indent;
    while (rest.size() > columns) {
      const size_t cut = rest.rfind(' ', columns);
      if (cut == std::string::npos || cut <= floor) break;
      out += rest.substr(0, cut) + "\n";
      rest = prefix + rest.substr(cut + 1);
      floor = prefix.size();
    }
    out += rest + "\n";
  }
  out.pop_back();
  return out;
}

std::string SchemaDir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed =
        exe.parent_path().parent_path() / "share" / "autoshard";
    if (fs::exists(installed / "plan.proto", ec)) return installed.string();
  }
  const fs::path source = fs::path(AUTOSHARD_SOURCE_DIR) / "proto";
  if (fs::exists(source / "plan.proto", ec)) return source.string();
  return AUTOSHARD_SHARE_DIR;
}

void SetAdvancedOptions(CLI::App* sub, const std::set<std::string>& common) {
  for (CLI::Option* opt : sub->get_options()) {
    if (opt->get_group().empty() || opt->get_required()) continue;
    bool is_common = common.count(opt->get_name()) > 0;
    for (const std::string& name : opt->get_lnames())
      is_common |= common.count("--" + name) > 0;
    for (const std::string& name : opt->get_snames())
      is_common |= common.count("-" + name) > 0;
    if (!is_common) opt->group(kAdvancedGroup);
  }
}

void InstallHelpFormatter(CLI::App* app, const std::string& exit_codes,
                          const std::string& no_plan_exit_codes) {
  app->formatter(
      std::make_shared<HelpFormatter>(exit_codes, no_plan_exit_codes));
}

std::vector<std::string> NormalizeArgs(const CLI::App& app,
                                       const std::vector<std::string>& args) {
  const CLI::App* sub = SubcommandOf(app, args);
  const std::vector<std::string> names = LongNames(app, sub);
  const std::set<std::string> known(names.begin(), names.end());
  // NAME:D1,D2,... as --input-shape takes it.
  static const std::regex kShape("[^-:][^:]*:[0-9]+(,[0-9]+)*");
  std::vector<std::string> out;
  bool after_shape = false;  // the previous value was an --input-shape's
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "--") {
      out.insert(out.end(), args.begin() + i, args.end());
      break;
    }
    if (absl::StartsWith(arg, "--") && arg.find('_') != std::string::npos) {
      const size_t eq = arg.find('=');
      std::string name = arg.substr(2, eq == std::string::npos ? eq : eq - 2);
      std::string dashed = absl::StrReplaceAll(name, {{"_", "-"}});
      if (!known.count(name) && known.count(dashed))
        arg = "--" + dashed + (eq == std::string::npos ? "" : arg.substr(eq));
    }
    if (after_shape && std::regex_match(arg, kShape)) {
      out.push_back("--input-shape");
    } else {
      after_shape = false;
    }
    out.push_back(arg);
    if (arg == "--input-shape" && i + 1 < args.size()) {
      out.push_back(args[++i]);
      after_shape = true;
    } else if (absl::StartsWith(arg, "--input-shape=")) {
      after_shape = true;
    }
  }
  return out;
}

namespace {

// True when --`name` of `sub` (or of `app`) takes a value (not a flag).
bool TakesValue(const CLI::App& app, const CLI::App* sub,
                const std::string& name) {
  for (const CLI::App* a : {sub, &app}) {
    if (a == nullptr) continue;
    const CLI::Option* opt = a->get_option_no_throw("--" + name);
    if (opt != nullptr) return opt->get_expected_min() > 0;
  }
  return false;
}

}  // namespace

std::optional<std::string> UnknownNameError(
    const CLI::App& app, const std::vector<std::string>& args) {
  if (args.empty()) return std::nullopt;
  const CLI::App* sub = SubcommandOf(app, args);
  if (sub == nullptr && !absl::StartsWith(args[0], "-")) {
    const std::string near = Closest(args[0], SubcommandNames(app));
    return absl::StrCat(
        "unknown subcommand '", args[0], "'",
        near.empty() ? "" : absl::StrCat("; did you mean '", near, "'?"),
        " (run 'autoshard help')");
  }
  const std::vector<std::string> names = LongNames(app, sub);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    if (!absl::StartsWith(arg, "--") || arg.size() == 2) continue;
    const std::string name = arg.substr(2, arg.find('=') - 2);
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      // "--mpi-global-args '--tag-output'": the value is not an option.
      if (arg.find('=') == std::string::npos && TakesValue(app, sub, name)) ++i;
      continue;
    }
    const std::string near =
        Closest(absl::StrReplaceAll(name, {{"_", "-"}}), names);
    const std::string where =
        sub == nullptr ? "" : absl::StrCat(" for '", sub->get_name(), "'");
    return absl::StrCat(
        "unknown option '--", name, "'", where,
        near.empty() ? "" : absl::StrCat("; did you mean --", near, "?"),
        " (run 'autoshard help", sub == nullptr ? "" : " " + sub->get_name(),
        "')");
  }
  return std::nullopt;
}

std::optional<int> RunHelpCommand(const CLI::App& app,
                                  const std::vector<std::string>& args) {
  if (args.empty() || args[0] != "help") return std::nullopt;
  if (args.size() == 1 || absl::StartsWith(args[1], "-")) {
    std::cout << app.help();
    return 0;
  }
  const CLI::App* sub = SubcommandOf(app, {args[1]});
  if (sub == nullptr || args.size() > 2) {
    std::cerr << "autoshard: error: "
              << UnknownNameError(app, {args[1]})
                     .value_or("'autoshard help' takes one subcommand")
              << "\n";
    return 2;
  }
  std::cout << sub->help("autoshard");
  return 0;
}

}  // namespace autoshard::cmd
