// Checkpoints across real processes: saved by 4 processes and restored by 2 (and by this test's
// own single process), saved by 2 and restored by 4, onto other shardings; an incomplete one is
// refused by every process. Runs tests/programs/multihost_probe.cpp (checkpoint-save/-restore).
#include "support/build_paths.hpp"
#include "support/process_group.hpp"

#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

namespace {

using namespace std::chrono_literals;
using am::testing::cluster_env;
using am::testing::free_loopback_port;
using am::testing::process_group;
namespace fs = std::filesystem;

/// Runs `n` probes of one checkpoint scenario on `dir`; returns every process's output.
std::vector<std::string> run(int n, const std::string& scenario, const std::string& dir, int status = 0) {
  process_group group;
  const int port = free_loopback_port();
  for (int p = 0; p < n; ++p) {
    auto env = cluster_env(p, n, port);
    env["AM_COLLECTIVE_TIMEOUT"] = "20s";
    group.start({am::testing::test_program_dir() + "/multihost_probe", scenario, dir}, env);
  }
  REQUIRE(group.wait(60s));
  INFO(group.all_output());
  std::vector<std::string> out;
  for (int p = 0; p < n; ++p) {
    out.push_back(group[static_cast<std::size_t>(p)].output());
    CHECK(group[static_cast<std::size_t>(p)].status == status);
  }
  return out;
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text + "\n").find("\n" + line + "\n") != std::string::npos;
}

void check_restored(const std::vector<std::string>& outputs) {
  for (auto& out : outputs) {
    INFO(out);
    for (const char* leaf : {"w", "b", "s", "step"})
      CHECK(has_line(out, std::string("restored ") + leaf + ": ok"));
  }
}

struct temp_dir {
  fs::path path;
  temp_dir() {
    char tmpl[] = "/tmp/am_checkpoint_it_XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~temp_dir() { fs::remove_all(path); }
};

} // namespace

TEST_CASE("multihost: a checkpoint saved by 4 processes restores on 2 and on 1, and one of 2 on 4",
          "[integration][multihost]") {
  temp_dir tmp;
  const std::string four = (tmp.path / "four").string(), two = (tmp.path / "two").string();
  for (auto& out : run(4, "checkpoint-save", four))
    CHECK(has_line(out, "checkpoint saved: complete"));
  // Every process wrote its own blocks: 8 tiles of w, 8 blocks of b, one replicated s, one step.
  CHECK(std::distance(fs::directory_iterator(tmp.path / "four" / "0"), fs::directory_iterator{}) == 8);
  check_restored(run(2, "checkpoint-restore", four));
  {
    // This process alone, 3 devices: the same values onto a layout none of the savers had.
    am::options o;
    o.cpu_devices = 3;
    am::runtime rt(o);
    am::mesh m({1, 3}, am::devices(), {"a", "b"});
    am::sharding_ptr rep = am::make_named_sharding(m, am::P());
    am::sharding_ptr rows = am::make_named_sharding(am::mesh({2, 1}, {am::devices()[2], am::devices()[0]}, {"r", "c"}),
                                                    am::P("r"));
    auto [w, b, s, step] = am::multihost::restore_checkpoint(four, std::make_tuple(rows, rep, rep, rep));
    CHECK(am::array_identical(w.to_host(), am::host_array::arange(32, am::dtype::float32).reshape({8, 4})));
    CHECK(am::array_identical(b.to_host(), am::host_array::arange(0, 160, 10, am::dtype::int64)));
    CHECK(s.to_host().to_vector<int>() == std::vector<int>{7, 8, 9});
    CHECK(step.to_host().item<std::int64_t>() == 42);
  }
  for (auto& out : run(2, "checkpoint-save", two))
    CHECK(has_line(out, "checkpoint saved: complete"));
  check_restored(run(4, "checkpoint-restore", two));
}

TEST_CASE("multihost: every process refuses a checkpoint whose index was never written", "[integration][multihost]") {
  temp_dir tmp;
  const std::string dir = (tmp.path / "torn").string();
  run(2, "checkpoint-save", dir);
  fs::remove(tmp.path / "torn" / "index.json"); // as if the save stopped before its last step
  for (auto& out : run(2, "checkpoint-restore", dir, /*status=*/2))
    CHECK(has_line(out, "error value_error: restore_checkpoint: " + dir
                            + " holds no complete checkpoint (index.json is missing: its save did not finish)"));
}
