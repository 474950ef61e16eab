// Command-line flags of the benchmarks: `--name value` pairs, anything else ignored.
#pragma once

#include <cstring>
#include <string>

namespace am::bench {

/// The integer after `name` on the command line, or `fallback`.
inline long long int_flag(int argc, char** argv, const char* name, long long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0)
      return std::stoll(argv[i + 1]);
  return fallback;
}

} // namespace am::bench
