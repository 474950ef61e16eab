/// A progress display for long commands, demos and benchmarks: a bar redrawn in place on a
/// terminal, fitted to its width, with the elapsed time and an estimate of the time left; plain
/// lines (one every 10%) anywhere else, so logs and pipes get no carriage returns. Under a launcher
/// only process 0 shows one (AM_PROGRESS=all: every process; off: none).
/// Its own small library (am_progress), so that the tool, the demos and the benchmarks link it; it
/// is not part of the installed surface (doc/observability.md).
/// (Debian 12 packages no C++ progress-bar library, so this one is ours.)
#pragma once

#include "tools/terminal.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

namespace am::tools {

/// Whether this process shows progress: AM_PROGRESS "all" or "off" decide; otherwise only process 0
/// of a cluster does (AM_PROCESS_ID unset or 0), so that N launched processes print one display, not
/// N. `getenv` reads the environment (a test passes its own). Throws nothing: an AM_PROGRESS other
/// than all/off/one is treated as unset.
bool progress_shown_here(const std::function<const char*(const char*)>& getenv);

/// "0:07", "12:30", "1:02:03": a duration in seconds as m:ss, or h:mm:ss from an hour on.
std::string clock_text(double seconds);

/// Shows done/total of a job on `out`.
class progress_display {
public:
  /// A display of `what` (a plural noun, "rounds") on `out`, as a bar when `terminal`, fitted to
  /// `columns` (0: terminal_columns(out)). Shows nothing when progress_shown_here says so.
  progress_display(std::ostream& out, bool terminal, const char* what, int columns = 0);

  /// Shows `done` of `total`; cheap to call often (a terminal is redrawn at most 10 times a second).
  /// `done` outside [0, total] is shown as it is, with the bar and percentage held to 0..100.
  void update(std::int64_t done, std::int64_t total);

  /// Ends the display: the bar's line is finished with a newline.
  void finish();

private:
  /// The text after the bar: "42% 420/1000 rounds 0:03<0:04 135/s".
  std::string status_text(std::int64_t done, std::int64_t total, double fraction, double seconds) const;

  std::ostream& out_;
  bool terminal_;
  bool shown_;
  const char* what_;
  int columns_;
  int last_decile_ = -1;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
};

} // namespace am::tools
