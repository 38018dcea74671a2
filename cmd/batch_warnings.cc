#include "cmd/batch_warnings.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace autoshard::cmd {

std::string BatchWarnings::Take(const std::string& err,
                                const std::string& label) {
  const std::string prefix = absl::StrCat("autoshard: warning: ", label, ": ");
  std::string rest;
  for (absl::string_view line : absl::StrSplit(err, '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, prefix)) {
      absl::StrAppend(&rest, line, "\n");
      continue;
    }
    const std::string message(line.substr(prefix.size()));
    std::vector<std::string>& labels = by_[message];
    if (labels.empty()) order_.push_back(message);
    labels.push_back(label);
  }
  return rest;
}

std::string BatchWarnings::Summary() const {
  // Models named in a line of several before "and N more".
  constexpr size_t kNamed = 2;
  std::string out;
  for (const std::string& message : order_) {
    const std::vector<std::string>& labels = by_.at(message);
    if (labels.size() == 1) {
      absl::StrAppend(&out, "autoshard: warning: ", labels[0], ": ", message,
                      "\n");
      continue;
    }
    std::vector<std::string> named(
        labels.begin(), labels.begin() + std::min(kNamed, labels.size()));
    if (labels.size() > kNamed)
      named.push_back(absl::StrCat("and ", labels.size() - kNamed, " more"));
    absl::StrAppend(&out, "autoshard: warning: ", labels.size(),
                    " models: ", message, " (", absl::StrJoin(named, ", "),
                    ")\n");
  }
  return out;
}

}  // namespace autoshard::cmd
