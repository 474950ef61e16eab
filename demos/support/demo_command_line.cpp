#include "demos/support/demo_command_line.hpp"

#include "actormesh/devices/options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <climits>
#include <iostream>
#include <vector>

namespace am::demo {

struct command_line::impl {
  CLI::App app;
  impl(std::string name, std::string description) : app(std::move(description), std::move(name)) {}
};

command_line::command_line(std::string name, std::string description)
    : impl_(std::make_unique<impl>(std::move(name), std::move(description))) {
  impl_->app.footer("Runtime flags (each also an AM_* variable; doc/runtime.md says what they do):\n"
                    + runtime_flags_help());
}

command_line::~command_line() = default;

void command_line::add_count(const std::string& flag, int& value, const std::string& help, int minimum) {
  impl_->app.add_option(flag, value, help)
    ->capture_default_str()
    ->check(CLI::Range(minimum, INT_MAX).description(">= " + std::to_string(minimum)));
}

void command_line::add_switch(const std::string& flag, bool& value, const std::string& help) {
  impl_->app.add_flag(flag, value, help);
}

std::optional<int> command_line::parse(int argc, const char* const* argv) {
  // The demo's own arguments, without the runtime's flags: `--am-x=v` alone, `--am-x v` with its value
  // (every runtime flag takes one). am::runtime checks those itself.
  std::vector<std::string> own;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--am-", 0) != 0)
      own.push_back(arg);
    else if (arg.find('=') == std::string::npos)
      ++i; // its value
  }
  std::reverse(own.begin(), own.end()); // CLI11 takes its vector last argument first
  try {
    impl_->app.parse(own);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) { // --help
      std::cout << impl_->app.help();
      return 0;
    }
    std::cerr << "error: " << e.what() << " (run with --help for usage)\n";
    return 2;
  }
  return std::nullopt;
}

} // namespace am::demo
