// The CSV cells of the study's own files (comparison.csv, series_long.csv; RFC 4180): a text
// cell quoted where it must be, and a line of chens's own unquoted cells split at its commas.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace chens {

// Text in a CSV cell, quoted where it holds a separator, a quote or a line break (RFC 4180).
inline std::string csv_text(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// The cells of a line that chens wrote without quotes (series.csv's header and rows).
inline std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (;;) {
    const std::size_t at = line.find(',', from);
    out.push_back(line.substr(from, at == std::string::npos ? std::string::npos : at - from));
    if (at == std::string::npos) return out;
    from = at + 1;
  }
}

}  // namespace chens
