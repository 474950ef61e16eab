// What the programs the integration tests start print: one line per fact, flushed at once (the
// tests read the output files while the programs run), and errors as "error <kind>: message".
#pragma once

#include "actormesh/actors/errors.hpp"

#include <cstdio>
#include <exception>
#include <string>

namespace am::testing {

/// Prints `line` and flushes.
inline void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

/// The am exception class of `e` as the tests match it ("process_failure_error", ..., "error").
inline const char* error_kind(const std::exception& e) {
  if (dynamic_cast<const am::process_failure_error*>(&e))
    return "process_failure_error";
  if (dynamic_cast<const am::desync_error*>(&e))
    return "desync_error";
  if (dynamic_cast<const am::timeout_error*>(&e))
    return "timeout_error";
  if (dynamic_cast<const am::out_of_memory_error*>(&e))
    return "out_of_memory_error";
  if (dynamic_cast<const am::value_error*>(&e))
    return "value_error";
  if (dynamic_cast<const am::runtime_error*>(&e))
    return "runtime_error";
  return "error";
}

/// Prints `e` as "error <kind>: message".
inline void report(const std::exception& e) { say(std::string("error ") + error_kind(e) + ": " + e.what()); }

} // namespace am::testing
