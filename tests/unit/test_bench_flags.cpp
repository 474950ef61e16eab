// The benchmarks' command line (bench/bench_flags.hpp): declared flags are read in both spellings,
// the runtime's --am-* flags pass through, and an undeclared flag, a missing value or a value that
// is not an integer is refused before anything is measured.
#include "bench/bench_flags.hpp"

#include <catch2/catch.hpp>

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

/// An argv the flags can point into (program name first).
struct command_line {
  std::vector<std::string> words;
  std::vector<char*> argv;
  command_line(std::initializer_list<const char*> args) : words{"bench_test"} {
    for (auto a : args)
      words.emplace_back(a);
    for (auto& w : words)
      argv.push_back(w.data());
  }
  int argc() const { return static_cast<int>(argv.size()); }
  char** data() { return argv.data(); }
};

} // namespace

TEST_CASE("bench flags: declared flags are read as --name value and --name=value", "[bench]") {
  command_line cl{"--rounds", "7", "--mib=3", "--dir", "/tmp/x", "--no-ray"};
  am::bench::flags flag(cl.argc(), cl.data(), "a test");
  CHECK(flag.integer("--rounds", 5, "timed rounds") == 7);
  CHECK(flag.integer("--mib", 64, "MiB") == 3);
  CHECK(flag.integer("--warmup", 2, "untimed rounds") == 2); // absent: the default
  CHECK(flag.text("--dir", "/tmp", "folder") == "/tmp/x");
  CHECK(flag.present("--no-ray", "skip Ray"));
  CHECK_FALSE(flag.present("--quick", "fewer rounds"));
  CHECK_NOTHROW(flag.finish());
}

TEST_CASE("bench flags: the runtime's --am-* flags and positional words pass through", "[bench]") {
  command_line cl{"worker", "--am-cpu-devices=4", "--am-trace", "/tmp/t.json", "--rounds", "9"};
  am::bench::flags flag(cl.argc(), cl.data(), "a test");
  CHECK(flag.integer("--rounds", 5, "timed rounds") == 9);
  CHECK_NOTHROW(flag.finish());
}

TEST_CASE("bench flags: an undeclared flag is refused, naming it", "[bench]") {
  command_line cl{"--rounds", "9", "--round", "3"};
  am::bench::flags flag(cl.argc(), cl.data(), "a test");
  (void)flag.integer("--rounds", 5, "timed rounds");
  CHECK_THROWS_WITH(flag.finish(), "unknown flag '--round' (--help lists the flags)");
}

TEST_CASE("bench flags: a misspelt runtime flag is the runtime's to refuse, a misspelt own one is ours", "[bench]") {
  command_line cl{"--am-cpu-device=3", "--roundz=2"};
  am::bench::flags flag(cl.argc(), cl.data(), "a test");
  (void)flag.integer("--rounds", 5, "timed rounds");
  CHECK_THROWS_WITH(flag.finish(), "unknown flag '--roundz' (--help lists the flags)");
}

TEST_CASE("bench flags: a value that is not an integer, or no value at all, is refused", "[bench]") {
  {
    command_line cl{"--rounds", "many"};
    am::bench::flags flag(cl.argc(), cl.data(), "a test");
    CHECK_THROWS_WITH(flag.integer("--rounds", 5, "timed rounds"), "--rounds takes an integer, got 'many'");
  }
  {
    command_line cl{"--rounds", "12abc"};
    am::bench::flags flag(cl.argc(), cl.data(), "a test");
    CHECK_THROWS_WITH(flag.integer("--rounds", 5, "timed rounds"), "--rounds takes an integer, got '12abc'");
  }
  {
    command_line cl{"--rounds", "99999999999999999999999"};
    am::bench::flags flag(cl.argc(), cl.data(), "a test");
    CHECK_THROWS_AS(flag.integer("--rounds", 5, "timed rounds"), std::invalid_argument);
  }
  {
    command_line cl{"--rounds"};
    am::bench::flags flag(cl.argc(), cl.data(), "a test");
    CHECK(flag.integer("--rounds", 5, "timed rounds") == 5);
    CHECK_THROWS_WITH(flag.finish(), "--rounds needs a value");
  }
}
