/// `actormesh launch --log-dir DIR`: the files that keep each process's output, one folder per
/// attempt as torchrun lays them out: DIR/attempt_<k>/<process>/stdout.log and stderr.log.
#pragma once

#include <fstream>
#include <memory>
#include <string>

namespace am::tools {

/// The stdout and stderr log files of one process in one attempt.
struct process_logs {
  std::unique_ptr<std::ofstream> out; ///< DIR/attempt_<k>/<process>/stdout.log
  std::unique_ptr<std::ofstream> err; ///< DIR/attempt_<k>/<process>/stderr.log
};

/// Creates DIR/attempt_<attempt>/<process>/ (and what is above it) and opens both files, emptied.
/// Throws am::runtime_error naming the path when the folder or a file cannot be made, so that a
/// launch stops before it starts a process whose output would be lost.
process_logs open_process_logs(const std::string& dir, int attempt, int process);

} // namespace am::tools
