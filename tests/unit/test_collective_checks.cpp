// The participants' checks of collectives at communicator sizes that are and are not powers of two
// (the dissemination rounds of the shared-memory path), a latecomer that gets the verdict of the
// ranks that gave up, and many threads issuing agreements on one communicator. Tagged [gloo], so
// that ctest runs them over both paths (shared memory, and TCP with AM_COLLECTIVE_CHECKS=tcp).
#include "collectives_test_support.hpp"

namespace am::test::collectives {

TEST_CASE("barriers meet and a desync names every issuer at 2, 3, 5 and 8 ranks", "[collectives][gloo]") {
  for (int n : {2, 3, 5, 8}) {
    INFO(n << " ranks");
    am::test::local_cluster cluster(n);
    auto reports = on_processes(first_processes(n), 60s, [&](int p, rank_report&) {
      auto comm = join(cluster, p, first_processes(n), "sizes");
      for (int round = 0; round < 10; ++round)
        comm.barrier("round " + std::to_string(round), 10s);
      comm.agree("Step 'odd'", p == n - 1 ? "the last one" : "the same", 10s);
    });
    for (int p = 0; p < n; ++p) {
      INFO("process " << p << ": " << reports[p].error_text);
      CHECK_THROWS_AS(rethrow(reports[p]), am::desync_error);
      CHECK_THAT(reports[p].error_text, Catch::StartsWith("Step 'odd' differs between processes (desync): "));
      for (int q = 0; q < n; ++q)
        CHECK_THAT(reports[p].error_text,
                   Catch::Contains("process " + std::to_string(q) + " issued " + (q == n - 1 ? "the last one" : "the same")));
    }
  }
}

TEST_CASE("a latecomer reports the verdict of the ranks that timed out waiting for it", "[collectives][gloo]") {
  am::test::local_cluster cluster(3);
  std::atomic<int> gave_up{0};
  auto reports = on_processes(first_processes(3), 30s, [&](int p, rank_report&) {
    auto comm = join(cluster, p, first_processes(3), "latecomer");
    comm.barrier("together", 10s);
    if (p == 2)
      while (gave_up.load() < 2)
        std::this_thread::sleep_for(10ms);
    try {
      comm.barrier("apart", p == 2 ? 10s : 400ms);
    } catch (...) {
      ++gave_up;
      throw;
    }
  });
  for (int p = 0; p < 3; ++p) {
    INFO("process " << p << ": " << reports[p].error_text);
    CHECK_THROWS_AS(rethrow(reports[p]), am::timeout_error);
    CHECK_THAT(reports[p].error_text, Catch::StartsWith("Barrier 'apart' timed out after 400 ms: process 2 has not arrived"));
  }
  CHECK(reports[2].seconds < 5.0); // the verdict, not its own 10 s timeout
}

TEST_CASE("four threads on one communicator issue barriers at once: each is one step, none is lost",
          "[collectives][gloo]") {
  // The barriers race for the calling thread's path and the worker's queue; every process numbers
  // its 100 alike (same name), so they all meet, and the communicator works afterwards.
  am::test::local_cluster cluster(2);
  auto reports = on_processes(first_processes(2), 60s, [&](int p, rank_report& report) {
    auto comm = join(cluster, p, first_processes(2), "threads");
    std::vector<std::thread> threads;
    std::mutex report_mutex;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < 25; ++i) {
          try {
            comm.barrier("b", 10s);
          } catch (const std::exception& e) {
 std::lock_guard<std::mutex> guard(report_mutex);
            report.problems.push_back("thread " + std::to_string(t) + ": " + e.what());
            return;
          }
        }
      });
    for (auto& t : threads)
      t.join();
    if (comm.steps() != 100)
      report.problems.push_back("steps: " + std::to_string(comm.steps()));
    comm.all_reduce(nullptr, nullptr, 0, dtype::float32, reduce_op::sum, 10s);
  });
  check_clean(reports);
}

TEST_CASE("send/recv and pair agreements between collectives leave the next collective's check whole",
          "[collectives][gloo]") {
  // Over TCP the next collective's fingerprint receives are posted ahead; a pair's step in between
  // once dropped them, and the record a peer had sent already was lost (the next collective timed
  // out on both ranks of the pair while the third went on).
  am::test::local_cluster cluster(3);
  auto reports = on_processes(first_processes(3), 60s, [&](int p, rank_report& report) {
    auto comm = join(cluster, p, first_processes(3), "interleaved");
    for (int round = 0; round < 10; ++round) {
      std::int32_t value = round * 10 + p;
      std::int32_t sum = 0;
      comm.all_reduce(&value, &sum, 1, dtype::int32, reduce_op::sum, 10s);
      if (sum != round * 30 + 3)
        report.problems.push_back("round " + std::to_string(round) + ": sum " + std::to_string(sum));
      if (p == 0)
        comm.send(&value, 1, dtype::int32, 1, 0, 10s);
      if (p == 1) {
        std::int32_t got = -1;
        comm.recv(&got, 1, dtype::int32, 0, 0, 10s);
        if (got != round * 10)
          report.problems.push_back("round " + std::to_string(round) + ": received " + std::to_string(got));
      }
      if (p >= 1)
        comm.agree_pair(2, 1, "Pair step", "the same", 10s);
      comm.barrier("round " + std::to_string(round), 10s);
    }
  });
  check_clean(reports);
}

TEST_CASE("agree_pair refuses a rank outside the pair, the pair of one rank and an empty label", "[collectives]") {
  am::test::local_cluster cluster(1);
  auto comm = join(cluster, 0, {0}, "pair-refusals");
  CHECK_THROWS_AS(comm.agree_pair(0, 0, "Pair", "x"), am::value_error);
  CHECK_THROWS_AS(comm.agree_pair(1, 2, "Pair", "x"), am::value_error);
  CHECK_THROWS_AS(comm.agree_pair(0, 1, "", "x"), am::value_error);
  CHECK(comm.steps() == 0);
  CHECK_FALSE(comm.broken());
}

} // namespace am::test::collectives
