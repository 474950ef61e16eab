/// A progress display for long commands, demos and benchmarks: a bar redrawn in place on a
/// terminal, plain lines (one every 10%) anywhere else, so logs and pipes get no carriage returns.
/// Its own small library (am_progress), so that programs outside the command-line tool link it too.
/// (Debian 12 packages no C++ progress-bar library, so this one is ours.)
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>

namespace am::tools {

/// True when `out` is std::cout and standard output is a terminal, or std::cerr (std::clog) and
/// standard error is one.
bool is_terminal(const std::ostream& out);

/// Shows done/total of a job on `out`.
class progress_display {
public:
  /// A display of `what` (a plural noun, "rounds") on `out`, as a bar when `terminal`.
  progress_display(std::ostream& out, bool terminal, const char* what);

  /// Shows `done` of `total`; cheap to call often (a terminal is redrawn at most 10 times a second).
  void update(std::int64_t done, std::int64_t total);

  /// Ends the display: the bar's line is finished with a newline.
  void finish();

private:
  std::ostream& out_;
  bool terminal_;
  const char* what_;
  int last_decile_ = -1;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
};

} // namespace am::tools
