/// `actormesh launch`: one child's output stream cut into lines, each written with the child's index.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>

namespace am::tools {

/// Cuts the bytes of one child's stdout (or stderr) into lines and writes each to the console as
/// "[index] line\n", whole, so that lines of different children never mix within a line, and to the
/// child's log file (--log-dir) as it is, without the prefix. A line longer than max_line is written
/// in pieces of max_line bytes, each as a line of its own.
class line_prefixer {
public:
  /// The longest line kept whole (64 KiB): a child that never writes a newline costs no more memory.
  static constexpr std::size_t max_line = 64 * 1024;

  /// Lines of process `index`, written to `console` unless it is null (a process --ranks-filter
  /// leaves out) and to `log` unless it is null. Both must outlive this.
  line_prefixer(int index, std::ostream* console, std::ostream* log = nullptr);

  /// Writes every line that `data` completes; keeps the unfinished rest for the next call.
  void feed(std::string_view data);

  /// At end of stream: writes the unfinished rest, if any, as a last line with its newline.
  void finish();

private:
  void write_line(std::string_view line);

  std::string prefix_;
  std::ostream* console_;
  std::ostream* log_;
  std::string pending_;
};

} // namespace am::tools
