#include "tools/terminal.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

namespace am::tools {

namespace {

/// The file descriptor behind std::cout, std::cerr or std::clog; -1 for any other stream.
int descriptor_of(const std::ostream& out) {
  if (&out == &std::cout)
    return STDOUT_FILENO;
  if (&out == &std::cerr || &out == &std::clog)
    return STDERR_FILENO;
  return -1;
}

/// A dimension of the terminal behind `out` (`pick` takes it from the window size), else the
/// environment variable `variable` when it holds 1..9999, else `fallback`.
template <typename Pick>
int terminal_size(const std::ostream& out, Pick pick, const char* variable, int fallback) {
  winsize size{};
  if (is_terminal(out) && ::ioctl(descriptor_of(out), TIOCGWINSZ, &size) == 0 && pick(size) > 0)
    return pick(size);
  if (const char* text = std::getenv(variable)) {
    const int value = std::atoi(text);
    if (value > 0 && value < 10000)
      return value;
  }
  return fallback;
}

} // namespace

bool is_terminal(const std::ostream& out) {
  const int fd = descriptor_of(out);
  return fd >= 0 && ::isatty(fd) == 1;
}

int terminal_columns(const std::ostream& out) {
  return terminal_size(out, [](const winsize& s) { return static_cast<int>(s.ws_col); }, "COLUMNS", 80);
}

int terminal_rows(const std::ostream& out) {
  return terminal_size(out, [](const winsize& s) { return static_cast<int>(s.ws_row); }, "LINES", 24);
}

} // namespace am::tools
