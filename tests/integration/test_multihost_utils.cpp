// The multihost utilities across 2 and 4 real processes on loopback: broadcast_one_to_all,
// process_allgather, assert_equal, sync_global_devices, host_local_array_to_global_array and
// global_array_to_host_local_array, with their errors on every process. Each process runs
// tests/programs/multihost_probe.cpp; expected values are computed here on the host.
#include "support/build_paths.hpp"
#include "support/process_group.hpp"

#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using am::host_array;
using am::testing::cluster_env;
using am::testing::free_loopback_port;
using am::testing::process_group;

const std::string probe = am::testing::test_program_dir() + "/multihost_probe";

/// Starts `count` probes (2 CPU devices each) playing `scenario`; waits for them all.
void run_cluster(process_group& group, int count, const std::vector<std::string>& scenario,
                 const std::map<std::string, std::string>& extra = {}) {
  const int port = free_loopback_port();
  std::vector<std::string> argv{probe};
  argv.insert(argv.end(), scenario.begin(), scenario.end());
  for (int p = 0; p < count; ++p) {
    auto env = cluster_env(p, count, port);
    env["AM_COLLECTIVE_TIMEOUT"] = "20s";
    for (auto& [k, v] : extra)
      env[k] = v;
    group.start(argv, env);
  }
  REQUIRE(group.wait(90s));
}

std::string shape_of(const host_array& h) {
  std::string out = "(";
  for (std::size_t k = 0; k < h.shape().size(); ++k)
    out += (k ? ", " : "") + std::to_string(h.shape()[k]);
  return out + (h.shape().size() == 1 ? ",)" : ")");
}

/// What the probe prints for a host array: dtype, shape, numpy's str.
std::string describe(const host_array& h) {
  return std::string(am::name(h.dtype())) + shape_of(h) + " " + am::to_string(h);
}

/// True when `text` holds `line` as one whole line.
bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text + "\n").find("\n" + line + "\n") != std::string::npos;
}

/// Checks that every process exited cleanly, printing `lines` (process p's text given by `line(p)`).
template <class Lines>
void check_all(process_group& group, int n, Lines&& lines) {
  INFO(group.all_output());
  for (int p = 0; p < n; ++p) {
    auto out = group[static_cast<std::size_t>(p)].output();
    CHECK(group[static_cast<std::size_t>(p)].status == 0);
    CHECK(has_line(out, "done"));
    for (const std::string& line : lines(p)) {
      INFO("process " << p << " should print: " << line);
      CHECK(has_line(out, line));
    }
  }
}

} // namespace

TEST_CASE("multihost: broadcast_one_to_all over real processes: sources, dtypes, trees and errors", "[integration][multihost]") {
  for (int n : {2, 4}) {
    process_group group;
    run_cluster(group, n, {"broadcast"});
    const auto f16 = host_array::full({2, 2}, n - 1, am::dtype::float16);
    check_all(group, n, [&](int) {
      return std::vector<std::string>{
          "broadcast: int64(4,) [0 1 2 3]",
          "broadcast uint8 pair: uint8(4,) [0 1 2 3] | uint8(4,) [0 1 2 3]",
          "broadcast from last: " + std::to_string(1.5f * static_cast<float>(n - 1)) + " "
              + ((n - 1) % 2 == 1 ? "true" : "false") + " " + describe(f16) + " int32(0, 3) []",
          "broadcast empty tree: ok",
          "two sources: error value_error: broadcast_one_to_all: exactly one process must be the source "
          "(is_source=true), but processes [0, 1] are",
          "no source: error value_error: broadcast_one_to_all: exactly one process must be the source "
          "(is_source=true), but none is",
          "broadcast after errors: int64(4,) [0 1 2 3]", "large broadcast: ok"};
    });
  }
}

TEST_CASE("multihost: process_allgather over real processes: stacked, tiled, scalars, mixed dtypes, global arrays",
          "[integration][multihost]") {
  for (int n : {2, 4}) {
    process_group group;
    run_cluster(group, n, {"allgather"});
    std::vector<double> values;
    for (int r = 0; r < n; ++r)
      for (int k = 0; k < 6; ++k)
        values.push_back(10.0 * r + k);
    const auto stacked = host_array::from_vector(values, {n, 2, 3});
    std::vector<std::int32_t> ranks;
    std::vector<std::uint8_t> u8;
    std::vector<bool> first;
    for (int r = 0; r < n; ++r) {
      ranks.push_back(r);
      u8.push_back(static_cast<std::uint8_t>(250 + r));
      first.push_back(r == 0);
    }
    const auto global = host_array::arange(0, 4.0 * n, 1, am::dtype::int32);
    const auto global2d = host_array::arange(0, 12.0 * n, 1, am::dtype::float32).reshape({4 * n, 3});
    check_all(group, n, [&](int) {
      return std::vector<std::string>{
          "stacked: " + describe(stacked), "tiled: " + describe(stacked.reshape({2 * n, 3})),
          "scalar stacked: " + describe(host_array::from_vector(ranks)),
          "scalar tiled: " + describe(host_array::from_vector(ranks)),
          "mixed: " + describe(host_array::from_vector(u8)) + " | "
              + describe(host_array::from_vector(ranks).astype(am::dtype::bfloat16)) + " | "
              + describe(host_array::full({n}, true)) + " " + describe(host_array::from_vector(first)),
          "empty array: int64(" + std::to_string(n) + ", 0) []", "global fully addressable: no",
          "global tiled: " + describe(global),
          "global stacked: error value_error: Gathering global non-fully-addressable arrays only supports tiled=True",
          "broadcast global: error runtime_error: Fetching value for `jax.Array` that spans non-addressable (non "
          "process local) devices is not possible. You can use `jax.experimental.multihost_utils.process_allgather` "
          "to print the global array or use `.addressable_shards` method of jax.Array to inspect the addressable "
          "(process local) shards.",
          "assert_equal with a global array: passed", "gather empty tree: ok",
          "global 2-d tiled: " + describe(global2d), "gathers after errors: " + describe(host_array::from_vector(ranks)), "large gathers: ok"};
    });
  }
}

TEST_CASE("multihost: assert_equal fails on every process with JAX's message when one value differs", "[integration][multihost]") {
  for (int n : {2, 4}) {
    process_group group;
    run_cluster(group, n, {"assert-equal"});
    std::vector<std::int32_t> all;
    std::vector<double> scalars;
    for (int r = 0; r < n; ++r) {
      all.push_back(1);
      all.push_back(r == 1 ? 5 : 2);
      scalars.push_back(r == 0 ? 1.5 : 2.5);
    }
    check_all(group, n, [&](int p) {
      return std::vector<std::string>{
          "assert_equal same: passed",
          "assert_equal differs: error assertion_error: values differ. Expected: "
              + am::to_string(host_array::from_vector(all)) + "; got: [1 " + (p == 1 ? "5" : "2") + "].",
          "assert_equal scalar: error assertion_error: scalar. Expected: (" + am::repr(host_array::from_vector(scalars))
              + ",); got: (" + (p == 0 ? "1.5" : "2.5") + ",).",
          "after assert_equal: passed"};
    });
  }
}

TEST_CASE("multihost: sync_global_devices with different names fails on every process, naming the name", "[integration][multihost]") {
  // zlib.crc32(b'test message') == 529295243, zlib.crc32(b'test message2') == 1621125314
  for (int n : {2, 4}) {
    process_group group;
    run_cluster(group, n, {"sync"});
    std::vector<std::int64_t> hashes{529295243};
    for (int r = 1; r < n; ++r)
      hashes.push_back(1621125314);
    const std::string expected = am::to_string(host_array::from_vector(hashes));
    check_all(group, n, [&](int p) {
      return std::vector<std::string>{
          "sync start: passed",
          "sync mismatch: error assertion_error: sync_global_devices name mismatch ('"
              + std::string(p == 0 ? "test message" : "test message2") + "'). Expected: " + expected
              + "; got: " + (p == 0 ? "529295243" : "1621125314") + ".",
          "sync end: passed"};
    });
  }
}

TEST_CASE("multihost: sync_global_devices times out naming the process that never arrived", "[integration][multihost]") {
  for (int n : {2, 4}) {
    const int absent = n - 1;
    process_group group;
    run_cluster(group, n, {"sync-without", std::to_string(absent)},
                {{"AM_COLLECTIVE_TIMEOUT", "2s"}, {"AM_ABSENT_SLEEP_MS", "5000"}});
    INFO(group.all_output());
    for (int p = 0; p < n; ++p) {
      auto out = group[static_cast<std::size_t>(p)].output();
      CHECK(group[static_cast<std::size_t>(p)].status == 0);
      if (p == absent)
        continue;
      CHECK(out.find("sync absent: error timeout_error: ") != std::string::npos);
      CHECK(out.find("process " + std::to_string(absent) + " has not arrived") != std::string::npos);
      auto at = out.find("failed after ms: ");
      REQUIRE(at != std::string::npos);
      auto ms = std::stol(out.substr(at + 17));
      CHECK(ms >= 1900);
      CHECK(ms < 4500);
    }
  }
}

TEST_CASE("multihost: host-local arrays become global arrays and back over real processes", "[integration][multihost]") {
  for (int n : {2, 4}) {
    process_group group;
    run_cluster(group, n, {"host-local"});
    std::vector<std::int64_t> xs;
    for (int r = 0; r < n; ++r)
      for (int k = 0; k < 8; ++k)
        xs.push_back(static_cast<std::int64_t>(k) * r);
    std::vector<float> rows;
    for (int r = 0; r < n; ++r)
      rows.insert(rows.end(), {static_cast<float>(r), static_cast<float>(r)});
    check_all(group, n, [&](int p) {
      std::vector<std::int64_t> mine(xs.begin() + 8 * p, xs.begin() + 8 * p + 8);
      std::vector<std::string> lines{
          "x global shape: (" + std::to_string(8 * n) + ",) addressable no",
          "x global value: " + describe(host_array::from_vector(xs)),
          "x back: " + describe(host_array::from_vector(mine)) + " addressable yes",
          "host global: " + describe(host_array::from_vector(rows, {n, 2})),
          "replicated: (4,) int64(4,) [0 1 2 3]",
          "tree global shapes: (" + std::to_string(2 * n) + ", 4) (" + std::to_string(n) + ", 2)",
          "tree back equal: yes",
          "global returned as is: yes",
          "local layout reused without copy: yes",
          "local array on one device: " + describe(host_array::from_vector(xs)),
          "none spec: error value_error: `None` is not a valid input to the pspecs argument. Please use "
          "PartitionSpec() if you wanted to replicate your input.",
          "none in tree: error value_error: `None` is not a valid input to the pspecs argument. Please use "
          "PartitionSpec() if you wanted to replicate your input.",
          "not a subcube: error value_error: When passing host local inputs to pjit, devices connected to a single "
          "host must form a contiguous subcube of the global device mesh",
          "host-local done"};
      return lines;
    });
  }
}

TEST_CASE("multihost: processes passing trees of different shapes all get a value error naming who differs",
          "[integration][multihost]") {
  for (int n : {2, 4}) {
    process_group group;
    run_cluster(group, n, {"mismatch"});
    check_all(group, n, [&](int p) {
      return std::vector<std::string>{
          "mismatched shapes: error value_error: process_allgather: every process must pass a tree of the same "
          "structure, shapes and dtypes, but process 1 passed another than process 0 (this process: float64["
              + std::string(p == 1 ? "3" : "2") + "])",
          "after mismatch: " + describe(host_array::full({n}, 1, am::dtype::int32))};
    });
  }
}

TEST_CASE("multihost: a process killed between gathers fails the next one on every survivor, at once",
          "[integration][multihost]") {
  for (int n : {2, 4}) {
    const int victim = n - 1;
    process_group group;
    const int port = free_loopback_port();
    for (int p = 0; p < n; ++p) {
      auto env = cluster_env(p, n, port);
      env["AM_COLLECTIVE_TIMEOUT"] = "20s";
      group.start({probe, "die-in-gather", std::to_string(victim)}, env);
    }
    REQUIRE(group.wait(60s));
    INFO(group.all_output());
    CHECK(group[static_cast<std::size_t>(victim)].signal == 9);
    for (int p = 0; p < victim; ++p) {
      auto out = group[static_cast<std::size_t>(p)].output();
      CHECK(group[static_cast<std::size_t>(p)].status == 0);
      CHECK(out.find("error process_failure_error: ") != std::string::npos);
      // Named as the failure notice names it ("process 3 (host ...) failed: ..."), whether the
      // collective or the notice reaches the waiting call first.
      const auto v = std::to_string(victim);
      CHECK(out.find("process " + v + " (host ") != std::string::npos);
      CHECK_FALSE(has_line(out, "gathers: all passed"));
      auto at = out.find("failed after ms: ");
      REQUIRE(at != std::string::npos);
      CHECK(std::stol(out.substr(at + 17)) < 5000);
      // Later utilities refuse at once: the shared communicator is broken.
      CHECK(out.find("later: error runtime_error: Communicator 'am.multihost' is broken") != std::string::npos);
      CHECK(has_line(out, "done"));
    }
  }
}
