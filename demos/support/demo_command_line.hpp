#pragma once
// A demo's command line: its own flags (parsed by CLI11) beside the runtime's --am-* flags, which are
// left for am::runtime. `--help` prints both and exits 0; a bad or unknown flag of the demo's is one
// line on stderr and exit status 2, as the actormesh tool does.

#include <memory>
#include <optional>
#include <string>

namespace am::demo {

/// The flags of one demo. Declare them, then call parse() first thing in main():
///
///     am::demo::command_line cli("hello", "Every thread runs a chain of steps on every device");
///     int steps = 200;
///     cli.add_count("--steps", steps, "steps in each chain", 0);
///     if (auto status = cli.parse(argc, argv)) return *status;
///     am::runtime rt(argc, argv);   // takes the --am-* flags
class command_line {
public:
  /// `name` is the program's name in the usage line; `description` says what the demo shows.
  command_line(std::string name, std::string description);
  ~command_line();
  command_line(const command_line&) = delete;
  command_line& operator=(const command_line&) = delete;

  /// `--flag N`: a whole number of at least `minimum`; `value` keeps its default when absent.
  void add_count(const std::string& flag, int& value, const std::string& help, int minimum);

  /// `--flag`: sets `value` to true when given.
  void add_switch(const std::string& flag, bool& value, const std::string& help);

  /// Parses the demo's flags, leaving every --am-* flag (with its value) to the runtime. Returns the
  /// status to exit with when the program should stop here (0 after --help, 2 after printing why a
  /// flag was refused), nothing when it should run.
  std::optional<int> parse(int argc, const char* const* argv);

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace am::demo
