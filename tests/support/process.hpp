// Running real processes from tests: a command line in, its exit status and output back.
#pragma once

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace am::testing {

/// What a finished command printed (stdout and stderr together) and its exit status.
struct command_result {
  int status = -1;
  std::string output;
};

/// Runs `command` through the shell under `timeout` (coreutils), so a hung child cannot hang the
/// test; a timed-out command has status 124.
inline command_result run_command(const std::string& command, int timeout_seconds = 300) {
  command_result result;
  std::string full = "timeout " + std::to_string(timeout_seconds) + " " + command + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (!pipe)
    return result;
  std::array<char, 4096> chunk;
  while (fgets(chunk.data(), static_cast<int>(chunk.size()), pipe))
    result.output += chunk.data();
  int raw = pclose(pipe);
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return result;
}

} // namespace am::testing
