// A batch's warnings, counted once (issue 16, point 6): the same warning
// from 12 models is one line, "autoshard: warning: 12 models: --batch-size
// 8 changed no input: ...", printed when the batch is done.
#ifndef AUTOSHARD_CMD_BATCH_WARNINGS_H_
#define AUTOSHARD_CMD_BATCH_WARNINGS_H_

#include <map>
#include <string>
#include <vector>

namespace autoshard::cmd {

class BatchWarnings {
 public:
  // `err`, one model's stderr, without its warning lines
  // ("autoshard: warning: LABEL: MESSAGE"), which are kept, by MESSAGE.
  std::string Take(const std::string& err, const std::string& label);
  // One line per distinct message, in the order first seen: "autoshard:
  // warning: LABEL: MESSAGE" for one model, "autoshard: warning: N models:
  // MESSAGE (A, B, and N-2 more)" for several.
  std::string Summary() const;

 private:
  std::vector<std::string> order_;                      // messages
  std::map<std::string, std::vector<std::string>> by_;  // message -> labels
};

}  // namespace autoshard::cmd

#endif  // AUTOSHARD_CMD_BATCH_WARNINGS_H_
