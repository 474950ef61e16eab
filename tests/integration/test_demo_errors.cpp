// The demos as real processes when something goes wrong: a device out of memory (AM_CPU_MEMORY_LIMIT=1
// makes every allocation fail, in hello's worker threads and in the tour's main thread) or a bad flag.
// Each must end with exit status 2 and one `error:` line after what it printed, never abort with an
// exception escaping a thread (exit 134, "terminate called").
#include "support/build_paths.hpp"
#include "support/process.hpp"

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

using am::testing::run_command;

namespace {

/// The demo `name` from this build, run with `env` settings (NAME=value ...) and `args`.
am::testing::command_result run_demo(const std::string& name, const std::string& env,
                                     const std::string& args) {
  return run_command("env " + env + " " + am::testing::binary_dir() + "/demos/" + name + " " + args, 120);
}

/// The lines of `text` that start with `prefix`.
std::vector<std::string> lines_starting_with(const std::string& text, const std::string& prefix) {
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0)
      found.push_back(line);
  return found;
}

/// The last non-empty line of `text`.
std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string last;
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      last = line;
  return last;
}

/// Checks a demo run that failed cleanly: exit 2, one error line carrying `wording`, printed last.
void check_clean_failure(const am::testing::command_result& r, const std::string& wording) {
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK_THAT(r.output, !Catch::Contains("terminate called"));
  auto errors = lines_starting_with(r.output, "error: ");
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0], Catch::Contains(wording));
  CHECK(last_line(r.output) == errors[0]);
}

} // namespace

TEST_CASE("hello reports a device out of memory in its worker threads and exits 2", "[integration][demo]") {
  auto r = run_demo("hello", "AM_CPU_MEMORY_LIMIT=1", "--am-gpus=off --threads 4 --steps 5");
  check_clean_failure(r, "RESOURCE_EXHAUSTED");
}

TEST_CASE("hello reports a bad flag value and exits 2", "[integration][demo]") {
  auto r = run_demo("hello", "AM_LOG=warning", "--am-gpus=off --threads many");
  check_clean_failure(r, "--threads: Value many not in range 1 to");
}

TEST_CASE("the sharding tour reports a device out of memory after its output and exits 2", "[integration][demo]") {
  auto r = run_demo("sharding_tour", "AM_CPU_MEMORY_LIMIT=1", "--quick --am-gpus=off");
  check_clean_failure(r, "RESOURCE_EXHAUSTED");
}

TEST_CASE("hello still runs clean without a memory limit", "[integration][demo]") {
  auto r = run_demo("hello", "AM_CPU_MEMORY_LIMIT=0", "--am-gpus=off --threads 2 --steps 5");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("all in order"));
  CHECK(lines_starting_with(r.output, "error: ").empty());
}

TEST_CASE("every demo prints its usage with --help and exits 0 without starting a runtime", "[integration][demo]") {
  for (const char* name : {"hello", "sharding_tour", "pmap_tour", "colocated_tour", "multihost_tour", "cluster_tour",
                           "actor_mesh_tour"}) {
    // AM_CPU_DEVICES=0 would fail any runtime the demo started: --help must stop before one.
    auto r = run_demo(name, "AM_CPU_DEVICES=0", "--help");
    INFO(name << ": " << r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Catch::Contains(std::string("Usage: ") + name));
    CHECK_THAT(r.output, Catch::Contains("--am-cpu-devices VALUE"));
    CHECK_THAT(r.output, !Catch::Contains("error"));
  }
}

TEST_CASE("a demo refuses a flag it does not know, and a misspelt runtime flag with the nearest name",
          "[integration][demo]") {
  auto unknown = run_demo("sharding_tour", "AM_LOG=warning", "--quik");
  check_clean_failure(unknown, "The following argument was not expected: --quik");
  auto misspelt = run_demo("hello", "AM_LOG=warning", "--am-cpu-device=3 --steps 1");
  check_clean_failure(misspelt, "unknown runtime flag --am-cpu-device (did you mean --am-cpu-devices?)");
  // The runtime's flags, in both forms, are not the demo's to refuse.
  auto both = run_demo("hello", "AM_LOG=warning", "--am-gpus off --am-cpu-devices=2 --threads 1 --steps 1");
  INFO(both.output);
  CHECK(both.status == 0);
  CHECK_THAT(both.output, Catch::Contains("2 devices:"));
}
