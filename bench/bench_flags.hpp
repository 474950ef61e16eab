// The command line of a benchmark program. Each flag is declared where it is read, with its
// default and what it means; `finish()` then answers `--help` with that list and refuses a flag no
// one declared, before the program measures anything. The runtime's own `--am-*` flags pass
// through to am::runtime, which reads them from the same argv.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace am::bench {

/// A benchmark's flags: `--name value` or `--name=value`, switches `--name`.
class flags {
public:
  /// `purpose`: one line saying what the program measures, first in its `--help`.
  flags(int argc, char** argv, std::string purpose) : argc_(argc), argv_(argv), purpose_(std::move(purpose)) {}

  /// The integer given to `name`, or `fallback`; a value that is not an integer is refused.
  long long integer(const char* name, long long fallback, const char* meaning) {
    declare(name, true, meaning, std::to_string(fallback));
    auto text = value_of(name);
    if (!text)
      return fallback;
    try {
      std::size_t used = 0;
      long long v = std::stoll(*text, &used);
      if (used == text->size())
        return v;
    } catch (const std::exception&) {
    }
    throw std::invalid_argument(std::string(name) + " takes an integer, got '" + *text + "'");
  }

  /// The text given to `name`, or `fallback`.
  std::string text(const char* name, std::string fallback, const char* meaning) {
    declare(name, true, meaning, fallback.empty() ? "none" : fallback);
    auto text = value_of(name);
    return text ? *text : fallback;
  }

  /// Whether the switch `name` (no value) is on the command line.
  bool present(const char* name, const char* meaning) {
    declare(name, false, meaning, "");
    for (int i = 1; i < argc_; ++i)
      if (std::strcmp(argv_[i], name) == 0)
        return true;
    return false;
  }

  /// After the last flag is declared: `--help` (or `-h`) prints the flags and exits with status 0;
  /// a flag nobody declared throws std::invalid_argument (guarded_main: one line, status 2).
  void finish() const {
    for (int i = 1; i < argc_; ++i)
      if (std::strcmp(argv_[i], "--help") == 0 || std::strcmp(argv_[i], "-h") == 0) {
        print_help();
        std::exit(0);
      }
    for (int i = 1; i < argc_; ++i) {
      std::string arg = argv_[i];
      if (arg.rfind("--am-", 0) == 0 || arg.rfind("--", 0) != 0)
        continue; // the runtime's flags, and values
      auto name = arg.substr(0, arg.find('='));
      const declared* d = find(name);
      if (!d)
        throw std::invalid_argument("unknown flag '" + name + "' (--help lists the flags)");
      if (d->takes_value && arg.find('=') == std::string::npos) {
        if (i + 1 >= argc_)
          throw std::invalid_argument(name + " needs a value");
        ++i;
      }
    }
  }

private:
  struct declared {
    std::string name;
    bool takes_value;
    std::string meaning;
    std::string fallback;
  };

  void declare(const char* name, bool takes_value, const char* meaning, std::string fallback) {
    if (!find(name))
      declared_.push_back({name, takes_value, meaning, std::move(fallback)});
  }

  const declared* find(const std::string& name) const {
    for (auto& d : declared_)
      if (d.name == name)
        return &d;
    return nullptr;
  }

  /// The value after `name` (`--name v` or `--name=v`), the last one when given twice.
  std::optional<std::string> value_of(const char* name) const {
    const std::string prefix = std::string(name) + "=";
    std::optional<std::string> found;
    for (int i = 1; i < argc_; ++i) {
      std::string arg = argv_[i];
      if (arg == name && i + 1 < argc_)
        found = argv_[++i];
      else if (arg.rfind(prefix, 0) == 0)
        found = arg.substr(prefix.size());
    }
    return found;
  }

  void print_help() const {
    const char* program = std::strrchr(argv_[0], '/');
    program = program ? program + 1 : argv_[0];
    std::printf("%s: %s\n\nusage: %s [flags] [--am-* runtime flags, doc/runtime.md]\n\nflags:\n", program,
                purpose_.c_str(), program);
    for (auto& d : declared_) {
      std::string left = d.name + (d.takes_value ? " <value>" : "");
      std::string right = d.meaning + (d.takes_value ? " (default " + d.fallback + ")" : "");
      std::printf("  %-26s %s\n", left.c_str(), right.c_str());
    }
    std::printf("  %-26s %s\n", "--help", "print this and exit");
  }

  int argc_;
  char** argv_;
  std::string purpose_;
  std::vector<declared> declared_;
};

} // namespace am::bench
