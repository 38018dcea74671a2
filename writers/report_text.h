// The text report's layout rules (Note [The report's units and width] in
// report_text.cc). ReportText itself is declared in writers/emit.h.
#ifndef AUTOSHARD_WRITERS_REPORT_TEXT_H_
#define AUTOSHARD_WRITERS_REPORT_TEXT_H_

#include <cstddef>
#include <string>

namespace autoshard {

// The widest line of the text report (issue 16: a terminal or a review
// comment shows it whole).
inline constexpr size_t kReportColumns = 100;

// `text` with every line longer than `columns` broken at its last space
// that fits, continuation lines indented by two spaces. A word longer than
// a line (a long path) is kept whole.
std::string WrapReportLines(const std::string& text, size_t columns);

}  // namespace autoshard

#endif  // AUTOSHARD_WRITERS_REPORT_TEXT_H_
