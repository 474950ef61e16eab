#include "tools/progress_display.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

namespace am::tools {

namespace {

/// The narrowest and widest bar drawn; below the narrowest the line has no bar.
constexpr int narrowest_bar = 10;
constexpr int widest_bar = 40;

/// Clear from the cursor to the end of the line (ECMA-48 EL): what a shorter redraw leaves behind.
constexpr const char* clear_to_end_of_line = "\x1b[K";

} // namespace

bool progress_shown_here(const std::function<const char*(const char*)>& getenv) {
  if (const char* choice = getenv("AM_PROGRESS")) {
    if (std::strcmp(choice, "all") == 0)
      return true;
    if (std::strcmp(choice, "off") == 0)
      return false;
  }
  const char* process = getenv("AM_PROCESS_ID");
  return process == nullptr || *process == '\0' || std::strcmp(process, "0") == 0;
}

std::string clock_text(double seconds) {
  const auto whole = static_cast<std::int64_t>(std::isfinite(seconds) && seconds > 0 ? seconds : 0);
  if (whole >= 3600)
    return fmt::format("{}:{:02}:{:02}", whole / 3600, whole / 60 % 60, whole % 60);
  return fmt::format("{}:{:02}", whole / 60, whole % 60);
}

progress_display::progress_display(std::ostream& out, bool terminal, const char* what, int columns)
    : out_(out), terminal_(terminal),
      shown_(progress_shown_here([](const char* name) { return std::getenv(name); })), what_(what),
      columns_(columns > 0 ? columns : terminal_columns(out)) {}

std::string progress_display::status_text(std::int64_t done, std::int64_t total, double fraction,
                                          double seconds) const {
  // Floor, so that 99.6% is not shown as done.
  const auto percent = static_cast<int>(std::floor(fraction * 100));
  auto text = fmt::format("{:3}% {}/{} {} {}", percent, done, total, what_, clock_text(seconds));
  if (done > 0 && done < total)
    text += "<" + clock_text(seconds * static_cast<double>(total - done) / static_cast<double>(done));
  if (seconds > 0 && done > 0)
    text += fmt::format(" {:.0f}/s", static_cast<double>(std::max<std::int64_t>(done, 0)) / seconds);
  return text;
}

void progress_display::update(std::int64_t done, std::int64_t total) {
  if (total <= 0 || !shown_)
    return;
  const double fraction = std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0);
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - start_).count();
  if (!terminal_) {
    const int decile = static_cast<int>(std::floor(fraction * 10));
    if (decile > last_decile_) {
      last_decile_ = decile;
      out_ << fmt::format("progress: {}% ({} of {} {}, {} elapsed", decile * 10, done, total, what_,
                          clock_text(seconds));
      if (done > 0 && done < total)
        out_ << ", about " << clock_text(seconds * static_cast<double>(total - done) / static_cast<double>(done))
             << " left";
      out_ << ")\n" << std::flush;
    }
    return;
  }
  if (drawn_ && done < total && now - last_draw_ < std::chrono::milliseconds(100))
    return;
  last_draw_ = now;
  drawn_ = true;
  auto status = status_text(done, total, fraction, seconds);
  // "[bar] status", within columns_ - 1 so that the terminal never wraps the line.
  const int room = columns_ - 1 - static_cast<int>(status.size()) - 3;
  std::string line;
  if (room >= narrowest_bar) {
    const int width = std::min(room, widest_bar);
    const auto filled = static_cast<std::size_t>(std::floor(fraction * width));
    line = "[" + std::string(filled, '#') + std::string(static_cast<std::size_t>(width) - filled, '.') + "] " + status;
  } else {
    line = status.substr(0, static_cast<std::size_t>(std::max(columns_ - 1, 1)));
  }
  out_ << '\r' << line << clear_to_end_of_line << std::flush;
}

void progress_display::finish() {
  if (terminal_ && drawn_)
    out_ << '\n' << std::flush;
  drawn_ = false;
}

} // namespace am::tools
