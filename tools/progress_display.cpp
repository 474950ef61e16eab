#include "tools/progress_display.hpp"

#include <fmt/format.h>

#include <iostream>
#include <string>
#include <unistd.h>

namespace am::tools {

bool is_terminal(const std::ostream& out) {
  if (&out == &std::cout)
    return ::isatty(STDOUT_FILENO) == 1;
  if (&out == &std::cerr || &out == &std::clog)
    return ::isatty(STDERR_FILENO) == 1;
  return false;
}

progress_display::progress_display(std::ostream& out, bool terminal, const char* what)
    : out_(out), terminal_(terminal), what_(what) {}

void progress_display::update(std::int64_t done, std::int64_t total) {
  if (total <= 0)
    return;
  double fraction = static_cast<double>(done) / static_cast<double>(total);
  if (!terminal_) {
    int decile = static_cast<int>(fraction * 10);
    if (decile > last_decile_) {
      last_decile_ = decile;
      out_ << fmt::format("progress: {}% ({} of {} {})\n", decile * 10, done, total, what_) << std::flush;
    }
    return;
  }
  auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total && now - last_draw_ < std::chrono::milliseconds(100))
    return;
  last_draw_ = now;
  drawn_ = true;
  constexpr int width = 40;
  int filled = static_cast<int>(fraction * width);
  double seconds = std::chrono::duration<double>(now - start_).count();
  out_ << fmt::format("\r[{}{}] {:3.0f}% {}/{} {} ({:.0f}/s)", std::string(static_cast<std::size_t>(filled), '#'),
                      std::string(static_cast<std::size_t>(width - filled), '.'), fraction * 100, done, total, what_,
                      seconds > 0 ? static_cast<double>(done) / seconds : 0.0)
       << std::flush;
}

void progress_display::finish() {
  if (terminal_ && drawn_)
    out_ << '\n' << std::flush;
  drawn_ = false;
}

} // namespace am::tools
