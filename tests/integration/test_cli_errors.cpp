// The real `actormesh` tool on bad command lines: every error, from the argument parser or the
// library, exits with status 2 and one line on stderr; nothing is clamped, empty entries and
// overflowing meshes are refused, and huge listings are refused, not printed.
#include "support/build_paths.hpp"
#include "support/process.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

namespace {

struct tool_result {
  int status = -1; // -1: killed by a signal, 124: timed out
  std::string out;
  std::string err;
};

// Runs the tool with `args` (shell syntax, no double quotes), stdout and stderr kept apart.
tool_result run_tool(const std::string& args) {
  char path[] = "/tmp/am_cli_errors_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  const auto run = am::testing::run_command("sh -c \"'" + am::testing::tool_path() + "' " + args + " 2>'" + path + "'\"", 60);
  std::ifstream in(path);
  tool_result r{run.status, run.output, std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>())};
  std::remove(path);
  return r;
}

// Status 2, nothing on stdout, exactly one line on stderr containing `text`.
void check_refused(const std::string& args, const std::string& text) {
  INFO("actormesh " << args);
  const auto r = run_tool(args);
  INFO("stderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(!r.err.empty());
  CHECK(r.err.find('\n') == r.err.size() - 1);
  CHECK(r.err.find(text) != std::string::npos);
}

} // namespace

TEST_CASE("cli_errors: a mesh whose device count overflows is refused, not a crash", "[cli_errors]") {
  check_refused("visualize --shape 8,8 --mesh 4294967296x4294967296 --spec ''",
                "Invalid mesh shape '4294967296x4294967296': the mesh would have more than 9223372036854775807 devices");
}

TEST_CASE("cli_errors: a mesh whose device count wraps to 8 is refused", "[cli_errors]") {
  check_refused("visualize --shape 8,8 --mesh 761496548840x48448661 --spec ''",
                "Invalid mesh shape '761496548840x48448661'");
}

TEST_CASE("cli_errors: argument-parser errors exit with status 2", "[cli_errors]") {
  check_refused("visualize --shape a", "Invalid shape 'a': entry 1 ('a') is not a non-negative integer");
  check_refused("visualize --mesh 4x2", "--shape is required");
  check_refused("visualize --shape 8 --bogus", "--bogus");
  check_refused("shards --shape 8 --json=maybe", "--json");
  check_refused("", "A subcommand is required");
}

TEST_CASE("cli_errors: numbers past int64 are refused, not clamped", "[cli_errors]") {
  check_refused("shards --shape 99999999999999999999 --spec ''", "is larger than 9223372036854775807");
  check_refused("shards --shape 8 --mesh 99999999999999999999 --spec ''", "is larger than 9223372036854775807");
  check_refused("shards --shape 8 --mesh 2 --device-order 0,18446744073709551617 --spec ''",
                "is larger than 9223372036854775807");
}

TEST_CASE("cli_errors: empty shape entries are refused", "[cli_errors]") {
  check_refused("shards --shape 8,,2 --spec ''", "Invalid shape '8,,2': entry 2 is empty");
  check_refused("shards --shape 8,2, --spec ''", "Invalid shape '8,2,': entry 3 is empty");
  check_refused("shards --shape ,8 --spec ''", "entry 1 is empty");
}

TEST_CASE("cli_errors: a mesh too large to list or draw is refused with the limit", "[cli_errors]") {
  check_refused("shards --shape 8 --mesh 1000x1000 --spec ''",
                "--mesh 1000x1000 has 1000000 devices; visualize and shards take at most 16384");
  check_refused("visualize --shape 8 --mesh 1000000 --spec ''", "take at most 16384");
  check_refused("visualize --shape 2048 --mesh 2048 --spec x", "`visualize_sharding` draws at most 1024 blocks");
}

TEST_CASE("cli_errors: --help still exits 0 with the usage on stdout", "[cli_errors]") {
  for (const char* args : {"--help", "visualize --help", "shards --help"}) {
    INFO(args);
    const auto r = run_tool(args);
    CHECK(r.status == 0);
    CHECK(r.out.find(std::string(args) == "--help" ? "visualize" : "--shape") != std::string::npos);
    CHECK(r.err.empty());
  }
}

TEST_CASE("cli_errors: library errors keep their wording on one line", "[cli_errors]") {
  check_refused("shards --shape 6,2 --mesh 4x2 --spec x",
                "implies that array axis 0 is partitioned 4 times, but the dimension size is 6");
  check_refused("shards --shape 8 --mesh 4x2 --spec z", "Resource axis: z of P('z',) is not found in mesh");
}

TEST_CASE("cli_errors: --version prints the version on stdout and exits 0, without a subcommand", "[cli_errors]") {
  const auto r = run_tool("--version");
  INFO("stdout: " << r.out << " stderr: " << r.err);
  CHECK(r.status == 0);
  CHECK(r.out.rfind("actormesh 0.", 0) == 0);
  CHECK(r.out.find("CAF ") != std::string::npos);
  CHECK(r.err.empty());
}

TEST_CASE("cli_errors: a misspelt subcommand is named with the list, `help` prints the usage", "[cli_errors]") {
  check_refused("infoo", "Unknown subcommand 'infoo' (did you mean info?) (the subcommands: info,");
  check_refused("zzzzzzzz", "Unknown subcommand 'zzzzzzzz' (the subcommands: info,");
  const auto help = run_tool("help");
  CHECK(help.status == 0);
  CHECK(help.out.find("Subcommands:") != std::string::npos);
  CHECK(help.err.empty());
}
