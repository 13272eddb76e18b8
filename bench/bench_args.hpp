// Command-line helpers shared by the benchmarks' untimed --one-pass modes.
#pragma once

#include <cstdlib>
#include <cstring>

namespace chens::bench {

// The value of --key=VALUE among argv as an integer, or fallback.
inline long long arg_value(int argc, char** argv, const char* key, long long fallback) {
  const std::size_t len = std::strlen(key);
  for (int a = 1; a < argc; ++a)
    if (std::strncmp(argv[a], key, len) == 0 && argv[a][len] == '=') return std::atoll(argv[a] + len + 1);
  return fallback;
}

}  // namespace chens::bench
