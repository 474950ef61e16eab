// The participants' checks of an NCCL communicator's steps (devices/collectives/device_step_checks),
// with processes as threads of one local cluster: what NCCL's collectives and send/recv ask of
// them, runnable without a GPU. One process checks nothing and makes nothing; several check every
// step among themselves and leave the supervisor out after creation; a disagreement names who
// issued what, a missing end is named by the timeout. Tagged [gloo]: ctest runs them over the
// shared-memory mesh and again over TCP checks.
#include "collectives_test_support.hpp"

#include "devices/collectives/device_step_checks.hpp"

#include <memory>

namespace am::test::collectives {

namespace {

using am::detail::device_step_checks;

const std::string creation = "nccl create over devices [0, 1, 2]";

/// Every process of `processes` joins the checks of communicator `name` (creation text `created`,
/// or process `odd`'s other list), in parallel; the reports say how each did.
std::vector<std::unique_ptr<device_step_checks>> join_checks(local_cluster& cluster, int n, const std::string& name,
                                                             std::vector<rank_report>& reports, int odd = -1) {
  std::vector<std::unique_ptr<device_step_checks>> checks(static_cast<std::size_t>(n));
  reports = on_processes(first_processes(n), 60s, [&](int p, rank_report&) {
    checks[static_cast<std::size_t>(p)] = std::make_unique<device_step_checks>(
      cluster.services(p), first_processes(n), name, p == odd ? "nccl create over devices [0, 2]" : creation,
      "127.0.0.1", 10s);
  });
  return checks;
}

/// Every report a desync whose text starts with `prefix` and names each of `issued` (what a
/// process issued: "process 0 issued ...").
void check_desync(const std::vector<rank_report>& reports, const std::string& prefix,
                  const std::vector<std::string>& issued) {
  for (std::size_t p = 0; p < reports.size(); ++p) {
    INFO("process " << p << ": " << reports[p].error_text);
    CHECK_THROWS_AS(rethrow(reports[p]), am::desync_error);
    CHECK_THAT(reports[p].error_text, Catch::StartsWith(prefix + " differs between processes (desync): "));
    for (auto& text : issued)
      CHECK_THAT(reports[p].error_text, Catch::Contains(text));
  }
}

} // namespace

TEST_CASE("device step checks: one process makes nothing and asks no one", "[collectives][gloo]") {
  am::test::local_cluster cluster(1);
  device_step_checks checks(cluster.services(0), {0}, "solo", creation, "127.0.0.1", 1s);
  for (std::uint64_t step = 1; step <= 5; ++step)
    checks.collective(step, "nccl all_reduce float32[4] sum", 1s);
  checks.pair(0, 1, 0, 0, "nccl send/recv float32[4] from rank 0 to rank 1", 1s);
  CHECK(cluster.checks() == 0);
}

TEST_CASE("device step checks: steps issued alike pass at 2 and 3 processes, and the supervisor sees only the "
          "creation",
          "[collectives][gloo]") {
  for (int n : {2, 3}) {
    INFO(n << " processes");
    am::test::local_cluster cluster(n);
    std::vector<rank_report> joined;
    auto checks = join_checks(cluster, n, "alike", joined);
    for (auto& r : joined)
      REQUIRE(r.error_text.empty());
    const auto after_creation = cluster.checks();
    auto reports = on_processes(first_processes(n), 60s, [&](int p, rank_report&) {
      auto& c = *checks[static_cast<std::size_t>(p)];
      for (std::uint64_t step = 1; step <= 20; ++step) {
        c.collective(step, "nccl all_reduce float32[" + std::to_string(step) + "] sum", 10s);
        // Rank r lives in process r % n; the pair 0 -> 1 crosses processes 0 and 1, and 0 -> n
        // stays inside process 0 (nothing to check there).
        if (p <= 1)
          c.pair(0, 1, 0, 1, "nccl send/recv float32[" + std::to_string(step) + "] from rank 0 to rank 1", 10s);
        if (p == 0)
          c.pair(0, n, 0, 0, "nccl send/recv float32[1] from rank 0 to rank " + std::to_string(n), 10s);
      }
    });
    for (int p = 0; p < n; ++p) {
      INFO("process " << p << ": " << reports[p].error_text);
      CHECK(reports[p].error_text.empty());
    }
    CHECK(cluster.checks() == after_creation);
  }
}

TEST_CASE("device step checks: a collective issued otherwise fails every process, naming who issued what",
          "[collectives][gloo]") {
  am::test::local_cluster cluster(3);
  std::vector<rank_report> joined;
  auto checks = join_checks(cluster, 3, "other-shape", joined);
  auto reports = on_processes(first_processes(3), 60s, [&](int p, rank_report&) {
    auto& c = *checks[static_cast<std::size_t>(p)];
    c.collective(1, "nccl all_gather float32[4]", 10s);
    c.collective(2, p == 2 ? "nccl all_reduce float32[8] sum" : "nccl all_reduce float32[4] sum", 10s);
  });
  check_desync(reports, "Collective 2 of NCCL communicator 'other-shape'",
               {"process 0 issued nccl all_reduce float32[4] sum", "process 2 issued nccl all_reduce float32[8] sum"});
}

TEST_CASE("device step checks: processes that list other devices fail at creation, naming both lists",
          "[collectives][gloo]") {
  am::test::local_cluster cluster(2);
  std::vector<rank_report> reports;
  auto checks = join_checks(cluster, 2, "other-list", reports, 1);
  check_desync(reports, "Creation of NCCL communicator 'other-list'",
               {"process 0 issued " + creation, "process 1 issued nccl create over devices [0, 2]"});
}

TEST_CASE("device step checks: a send/recv of another count fails both ends, and an end that never comes is named",
          "[collectives][gloo]") {
  am::test::local_cluster cluster(2);
  std::vector<rank_report> joined;
  auto checks = join_checks(cluster, 2, "pairs", joined);
  auto reports = on_processes(first_processes(2), 60s, [&](int p, rank_report&) {
    checks[static_cast<std::size_t>(p)]->pair(
      1, 0, 1, 0, std::string("nccl send/recv float32[") + (p == 0 ? "4" : "5") + "] from rank 1 to rank 0", 10s);
  });
  check_desync(reports, "Send/recv 0 from rank 1 to rank 0 of NCCL communicator 'pairs'",
               {"process 0 issued nccl send/recv float32[4]", "process 1 issued nccl send/recv float32[5]"});

  am::test::local_cluster second(2);
  auto fresh = join_checks(second, 2, "one-end", joined);
  auto alone = on_processes({0}, 30s, [&](int, rank_report&) {
    fresh[0]->pair(0, 1, 0, 1, "nccl send/recv float32[4] from rank 0 to rank 1", 300ms);
  });
  INFO(alone[0].error_text);
  CHECK_THROWS_AS(rethrow(alone[0]), am::timeout_error);
  CHECK_THAT(alone[0].error_text, Catch::StartsWith("Send/recv 0 from rank 0 to rank 1 of NCCL communicator 'one-end'"));
  CHECK_THAT(alone[0].error_text, Catch::Contains("process 1 has not arrived"));
}

} // namespace am::test::collectives
