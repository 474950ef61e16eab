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

} // namespace am::test::collectives
