// One CSV field (RFC 4180): quoted when it holds a comma, quote or line
// break, quotes doubled. For the batch summary and `inspect --nodes-csv`.
#ifndef AUTOSHARD_WRITERS_CSV_H_
#define AUTOSHARD_WRITERS_CSV_H_

#include <string>

namespace autoshard {

inline std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace autoshard

#endif  // AUTOSHARD_WRITERS_CSV_H_
