// A number as chens's messages and tables show it to people: printf's %g family, never
// std::to_string's fixed six decimals (which wrote 1e-12 as 0.000000, issue 17).
#pragma once

#include <cstdio>
#include <string>

namespace chens {

inline std::string number_text(double x, const char* format = "%.3g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

}  // namespace chens
