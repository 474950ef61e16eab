// The collectives engine's failures, with real Gloo over real loopback TCP and ranks as threads:
// timeouts naming who never arrived, desync, processes that fail mid-transfer, bad arguments and
// creation errors. Every collective's results are in test_gloo_collectives.cpp.
#include "collectives_test_support.hpp"

#include <algorithm>
#include <exception>

#include <sys/resource.h>
#include <unistd.h>

using namespace am::test::collectives;

// ---- failures ------------------------------------------------------------------------------------

TEST_CASE("a rank that never arrives: the others time out naming it, then refuse at once", "[collectives][gloo]") {
  am::test::local_cluster cluster(3);
  std::atomic<int> failed{0};
  std::vector<double> refusal_seconds(3, 1e9);
  std::vector<std::string> refusals(3);
  auto reports = on_processes(first_processes(3), 30s, [&](int p, rank_report& report) {
    auto comm = join(cluster, p, first_processes(3), "slow");
    std::vector<float> v(16, 1.0f);
    if (p == 2)
      while (failed.load() < 2)
        std::this_thread::sleep_for(10ms); // arrives only after the others gave up
    const auto start = clock_type::now();
    try {
      comm.all_reduce(v.data(), v.data(), v.size(), dtype::float32, reduce_op::sum, 500ms);
    } catch (...) {
      report.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
      ++failed;
      try {
        const auto again = clock_type::now();
        try {
          comm.all_reduce(v.data(), v.data(), v.size(), dtype::float32, reduce_op::sum, 5s);
        } catch (const am::runtime_error& e) {
          refusals[p] = e.what();
        }
        refusal_seconds[p] = std::chrono::duration<double>(clock_type::now() - again).count();
      } catch (...) {
      }
      throw;
    }
  });
  for (int p = 0; p < 3; ++p) {
    INFO("process " << p << ": " << reports[p].error_text);
    CHECK_THROWS_AS(rethrow(reports[p]), am::timeout_error);
    CHECK_THAT(reports[p].error_text, Catch::Contains("process 2 has not arrived"));
    CHECK_THAT(reports[p].error_text, Catch::Contains("all_reduce(sum) float32[16]"));
    CHECK_THAT(reports[p].error_text, Catch::Contains("communicator 'slow'"));
    CHECK_THAT(refusals[p], Catch::Contains("is broken"));
    CHECK(refusal_seconds[p] < 0.2);
  }
  CHECK(reports[0].seconds < 3.0);
  CHECK(reports[1].seconds < 3.0);
}

TEST_CASE("ranks that issue different collectives all get a desync error naming who issued what",
          "[collectives][gloo]") {
  am::test::local_cluster cluster(3);
  std::vector<int> broken(3, 0); // not vector<bool>: each thread writes its own element
  auto reports = on_processes(first_processes(3), 30s, [&](int p, rank_report&) {
    auto comm = join(cluster, p, first_processes(3), "desync");
    std::vector<float> in(8, 1.0f), out(24);
    try {
      if (p == 0)
        comm.all_reduce(in.data(), out.data(), 8, dtype::float32, reduce_op::sum);
      else if (p == 1)
        comm.all_reduce(in.data(), out.data(), 8, dtype::float32, reduce_op::max);
      else
        comm.all_gather(in.data(), out.data(), 8, dtype::float32);
    } catch (...) {
      broken[p] = comm.broken();
      throw;
    }
  });
  for (int p = 0; p < 3; ++p) {
    INFO("process " << p << ": " << reports[p].error_text);
    CHECK_THROWS_AS(rethrow(reports[p]), am::desync_error);
    CHECK_THAT(reports[p].error_text, Catch::Contains("process 0 issued all_reduce(sum) float32[8] over processes [0, 1, 2]"));
    CHECK_THAT(reports[p].error_text, Catch::Contains("process 1 issued all_reduce(max) float32[8] over processes [0, 1, 2]"));
    CHECK_THAT(reports[p].error_text, Catch::Contains("process 2 issued all_gather float32[8] over processes [0, 1, 2]"));
    CHECK_THAT(reports[p].error_text, Catch::Contains("step 1 of communicator 'desync'"));
    CHECK(broken[p]);
  }
}

TEST_CASE("barriers meet when the names agree, and a different name is a desync on every rank", "[collectives][gloo]") {
  am::test::local_cluster cluster(3);
  std::atomic<int> passed{0};
  auto reports = on_processes(first_processes(3), 30s, [&](int p, rank_report&) {
    auto comm = join(cluster, p, first_processes(3), "barriers");
    for (int round = 0; round < 20; ++round)
      comm.barrier("round " + std::to_string(round), 10s);
    ++passed;
    comm.barrier(p == 1 ? "odd one" : "last", 10s);
  });
  CHECK(passed.load() == 3);
  for (int p = 0; p < 3; ++p) {
    INFO("process " << p << ": " << reports[p].error_text);
    CHECK_THROWS_AS(rethrow(reports[p]), am::desync_error);
    CHECK_THAT(reports[p].error_text, Catch::StartsWith("Barrier 'last' differs between processes (desync): ")
                                        || Catch::StartsWith("Barrier 'odd one' differs between processes (desync): "));
    CHECK_THAT(reports[p].error_text, Catch::Contains("process 0 issued barrier 'last' over processes [0, 1, 2]"));
    CHECK_THAT(reports[p].error_text, Catch::Contains("process 1 issued barrier 'odd one' over processes [0, 1, 2]"));
  }
}

TEST_CASE("a barrier a rank never reaches times out on the others, naming it as the supervisor does",
          "[collectives][gloo]") {
  am::test::local_cluster cluster(3);
  std::atomic<int> gave_up{0};
  auto reports = on_processes(first_processes(3), 30s, [&](int p, rank_report&) {
    auto comm = join(cluster, p, first_processes(3), "lonely");
    if (p == 2) {
      while (gave_up.load() < 2)
        std::this_thread::sleep_for(10ms);
      return;
    }
    try {
      comm.barrier("lonely", 500ms);
    } catch (...) {
      ++gave_up;
      throw;
    }
  });
  for (int p = 0; p < 2; ++p) {
    INFO("process " << p << ": " << reports[p].error_text);
    CHECK_THROWS_AS(rethrow(reports[p]), am::timeout_error);
    CHECK_THAT(reports[p].error_text, Catch::Contains("Barrier 'lonely'"));
    CHECK_THAT(reports[p].error_text, Catch::Contains("process 2 has not arrived"));
  }
}

TEST_CASE("all-gathers of different sizes are a desync: the receives posted before the check take no bytes",
          "[collectives][gloo]") {
  // An all-gather posts its receives before the cluster's check (gloo_engine::post_all_gather):
  // here each rank posts receives of another size, so bytes flowing before the check would land
  // out of bounds. Every rank must get the desync, its output untouched, and a new communicator
  // over the same processes must work.
  am::test::local_cluster cluster(3);
  std::vector<int> untouched(3, 0);
  std::vector<float> gathered(3, 0.0f);
  auto reports = on_processes(first_processes(3), 30s, [&](int p, rank_report&) {
    const std::size_t count = 4u << p; // 4, 8, 16 elements
    std::vector<float> in(count, static_cast<float>(p + 1)), out(count * 3, -1.0f);
    {
      auto comm = join(cluster, p, first_processes(3), "sizes");
      try {
        comm.all_gather(in.data(), out.data(), count, dtype::float32, 5s);
      } catch (...) {
        untouched[p] = std::all_of(out.begin(), out.end(), [](float v) { return v == -1.0f; });
        auto again = join(cluster, p, first_processes(3), "sizes again");
        std::vector<float> one{static_cast<float>(p + 1)}, all(3);
        again.all_gather(one.data(), all.data(), 1, dtype::float32);
        gathered[p] = all[0] + all[1] * 10 + all[2] * 100;
        throw;
      }
    }
  });
  for (int p = 0; p < 3; ++p) {
    INFO("process " << p << ": " << reports[p].error_text);
    CHECK_THROWS_AS(rethrow(reports[p]), am::desync_error);
    CHECK_THAT(reports[p].error_text, Catch::Contains("process 0 issued all_gather float32[4] over processes [0, 1, 2]"));
    CHECK_THAT(reports[p].error_text, Catch::Contains("process 2 issued all_gather float32[16] over processes [0, 1, 2]"));
    CHECK(untouched[p]);
    CHECK(gathered[p] == 321.0f);
  }
}

TEST_CASE("a process that fails while the others wait for its fingerprint fails them at once, naming it",
          "[collectives][gloo]") {
  am::test::local_cluster cluster(3);
  std::atomic<int> finished{0};
  auto reports = on_processes(first_processes(3), 30s, [&](int p, rank_report& report) {
    auto comm = join(cluster, p, first_processes(3), "dies");
    cluster.services(p).barrier("joined", 10s);
    if (p == 2) {
      // Never issues the collective: the test marks it failed while the others wait for it.
      std::this_thread::sleep_for(300ms);
      cluster.fail(2);
      while (finished.load() < 2)
        std::this_thread::sleep_for(10ms);
      return;
    }
    std::vector<float> v(1 << 16, 1.0f);
    const auto start = clock_type::now();
    try {
      comm.all_reduce(v.data(), v.data(), v.size(), dtype::float32, reduce_op::sum, 20s);
    } catch (...) {
      report.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
      ++finished;
      throw;
    }
    ++finished;
  });
  for (int p = 0; p < 2; ++p) {
    INFO("process " << p << ": " << reports[p].error_text);
    CHECK_THROWS_AS(rethrow(reports[p]), am::process_failure_error);
    try {
      rethrow(reports[p]);
    } catch (const am::process_failure_error& e) {
      CHECK(e.process() == 2);
    } catch (...) {
    }
    CHECK_THAT(reports[p].error_text, Catch::Contains("Process 2 failed"));
    CHECK_THAT(reports[p].error_text, Catch::Contains("communicator 'dies'"));
    CHECK(reports[p].seconds < 2.0);
  }
}

TEST_CASE("a collective whose bytes cannot move in time fails on every rank with a timeout naming it",
          "[collectives][gloo]") {
  // 64 MiB per rank within 1 ms. Gloo applies an operation's timeout to each of its waits, not to
  // the whole: with 10 ms, a quiet run (ctest -j2 of the landed main once) moved every 21 MiB block
  // of the ring within its 10 ms wait and the collective succeeded. Within 1 ms a block would need
  // 21 GB/s, beyond loopback TCP on any machine; the bytes (or, under load, the fingerprints) miss
  // the deadline.
  am::test::local_cluster cluster(3);
  auto reports = on_processes(first_processes(3), 30s, [&](int p, rank_report& report) {
    auto comm = join(cluster, p, first_processes(3), "late");
    cluster.services(p).barrier("joined", 10s);
    std::vector<float> v(std::size_t{1} << 24, 1.0f);
    const auto start = clock_type::now();
    try {
      comm.all_reduce(v.data(), v.data(), v.size(), dtype::float32, reduce_op::sum, 1ms);
    } catch (...) {
      report.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
      throw;
    }
  });
  for (int p = 0; p < 3; ++p) {
    INFO("process " << p << ": " << reports[p].error_text);
    CHECK_THROWS_AS(rethrow(reports[p]), am::timeout_error);
    CHECK_THAT(reports[p].error_text,
               Catch::Contains("all_reduce(sum) float32[16777216] (step 1 of communicator 'late'"));
    CHECK(reports[p].seconds < 3.5);
  }
}

TEST_CASE("two ranks that both send first time out instead of hanging", "[collectives][gloo]") {
  // Equal timeouts, and unequal ones: process 1 gives up first and closes its connections while
  // process 0 still waits, which must still name process 1 as the one that never came (over TCP
  // checks the closed connection reached process 0 before its deadline: a CI failure).
  const auto timeout_of_1 = GENERATE(500ms, 150ms);
  am::test::local_cluster cluster(2);
  auto reports = on_processes(first_processes(2), 30s, [&](int p, rank_report&) {
    auto comm = join(cluster, p, first_processes(2), "both-send");
    float x = 1.0f;
    comm.send(&x, 1, dtype::float32, 1 - p, 0, p == 0 ? 600ms : timeout_of_1);
  });
  for (int p = 0; p < 2; ++p) {
    INFO("process " << p << ": " << reports[p].error_text);
    CHECK_THROWS_AS(rethrow(reports[p]), am::timeout_error);
    CHECK_THAT(reports[p].error_text, Catch::Contains("process " + std::to_string(1 - p) + " has not arrived"));
    CHECK_THAT(reports[p].error_text, Catch::Contains("send/recv float32[1] from rank " + std::to_string(p)));
  }
}

TEST_CASE("bad arguments are refused before a step is taken and leave the communicator working",
          "[collectives][gloo]") {
  am::test::local_cluster cluster(2);
  auto reports = on_processes(first_processes(2), 30s, [&](int p, rank_report& report) {
    auto comm = join(cluster, p, first_processes(2), "args");
    std::vector<std::int32_t> v(6, 1), out(12);
    auto expect = [&](const char* what, auto&& call, auto error_tag) {
      using E = typename decltype(error_tag)::type;
      try {
        call();
        report.problems.push_back(std::string(what) + ": accepted");
      } catch (const E&) {
      } catch (const std::exception& e) {
        report.problems.push_back(std::string(what) + ": wrong error: " + e.what());
      }
    };
    const auto value = std::type_identity<am::value_error>{};
    const auto type = std::type_identity<am::type_error>{};
    expect("mean of int32", [&] { comm.all_reduce(v.data(), v.data(), 6, dtype::int32, reduce_op::mean); }, type);
    expect("sum of bool", [&] { comm.all_reduce(v.data(), v.data(), 6, dtype::bool_, reduce_op::sum); }, type);
    expect("reduce_scatter mean of uint8",
           [&] { comm.reduce_scatter(v.data(), v.data(), 6, dtype::uint8, reduce_op::mean); }, type);
    expect("null input", [&] { comm.all_reduce(nullptr, v.data(), 6, dtype::int32, reduce_op::sum); }, value);
    expect("root out of range", [&] { comm.broadcast(v.data(), 6, dtype::int32, 2); }, value);
    expect("negative root", [&] { comm.broadcast(v.data(), 6, dtype::int32, -1); }, value);
    expect("all_to_all of 5", [&] { comm.all_to_all(v.data(), out.data(), 5, dtype::int32); }, value);
    expect("send to self", [&] { comm.send(v.data(), 6, dtype::int32, p); }, value);
    expect("recv from rank 7", [&] { comm.recv(v.data(), 6, dtype::int32, 7); }, value);
    expect("zero timeout", [&] { comm.all_reduce(v.data(), v.data(), 6, dtype::int32, reduce_op::sum, 0ms); }, value);
    expect("overflowing count",
           [&] { comm.all_reduce(v.data(), v.data(), std::size_t{1} << 62, dtype::int64, reduce_op::sum); }, value);
    if (comm.steps() != 0)
      report.problems.push_back("a refused call took a step");
    comm.all_reduce(v.data(), v.data(), 6, dtype::int32, reduce_op::sum);
    if (v[0] != 2 || comm.steps() != 1 || comm.broken())
      report.problems.push_back("the communicator does not work after refused calls");
  });
  check_clean(reports);
}

TEST_CASE("creation refuses bad lists, names, addresses and timeouts before talking to anyone",
          "[collectives][gloo]") {
  am::test::local_cluster cluster(3);
  auto& services = cluster.services(1);
  auto make = [&](std::vector<int> processes, std::string name, std::string address = "127.0.0.1",
                  std::chrono::milliseconds timeout = 5s) {
    am::communicator comm(services, std::move(processes), std::move(name), std::move(address), timeout);
  };
  CHECK_THROWS_AS(make({}, "c"), am::value_error);
  CHECK_THROWS_AS(make({1, 0}, "c"), am::value_error);
  CHECK_THROWS_AS(make({0, 1, 1}, "c"), am::value_error);
  CHECK_THROWS_AS(make({0, 2}, "c"), am::value_error);       // this process (1) is not in it
  CHECK_THROWS_AS(make({0, 1, 3}, "c"), am::value_error);    // 3 is not a process
  CHECK_THROWS_AS(make({0, 1}, ""), am::value_error);
  CHECK_THROWS_AS(make({0, 1}, "a/b"), am::value_error);
  CHECK_THROWS_AS(make({0, 1}, std::string(201, 'x')), am::value_error);
  CHECK_THROWS_AS(make({0, 1}, "c", ""), am::value_error);
  CHECK_THROWS_AS(make({0, 1}, "c", "no-such-host.invalid"), am::value_error);
  CHECK_THROWS_WITH(make({0, 1}, "c", "192.0.2.1"), Catch::Contains("cannot bind"));  // not a local address
  CHECK_THROWS_AS(make({0, 1}, "c", "127.0.0.1", 0ms), am::value_error);
  CHECK(cluster.checks() == 0);
}

TEST_CASE("a process at its descriptor limit is told so, not to give a local interface", "[collectives][gloo]") {
  am::test::local_cluster cluster(2);
  auto& services = cluster.services(1);
  // UBSan checks a virtual call's object through a pipe it opens (IsAccessibleMemoryRange); at the
  // descriptor limit that pipe fails and the check reports a valid object as having an invalid vptr.
  // One call before the limit is lowered puts this object's type in UBSan's cache of checked types.
  CHECK(services.process_index() == 1);
  // Lower the soft limit to the lowest descriptor not in use: the next socket() fails with EMFILE.
  rlimit old{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &old) == 0);
  int probe = ::dup(0);
  REQUIRE(probe >= 0);
  ::close(probe);
  rlimit low = old;
  low.rlim_cur = static_cast<rlim_t>(probe);
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
  // The error is read only once the limit is restored: e.what() is a virtual call too.
  std::exception_ptr failure;
  try {
    am::communicator comm(services, {0, 1}, "fd", "127.0.0.1", 5s);
  } catch (...) {
    failure = std::current_exception();
  }
  ::setrlimit(RLIMIT_NOFILE, &old);
  std::string message;
  try {
    if (failure)
      std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    message = e.what();
  }
  CHECK(message.find("file descriptor limit") != std::string::npos);
  CHECK(message.find("give the address of a local interface") == std::string::npos);
  CHECK(cluster.checks() == 0);
}

TEST_CASE("a name is single-use: joining it again is refused", "[collectives][gloo]") {
  am::test::local_cluster cluster(2);
  auto reports = on_processes(first_processes(2), 30s, [&](int p, rank_report& report) {
    { auto comm = join(cluster, p, first_processes(2), "once"); }
    try {
      auto again = join(cluster, p, first_processes(2), "once");
      report.problems.push_back("a used name was accepted");
    } catch (const am::value_error& e) {
      if (std::string(e.what()).find("already used") == std::string::npos)
        report.problems.push_back(std::string("unexpected message: ") + e.what());
    }
  });
  check_clean(reports);
}

TEST_CASE("participants that disagree on the process list get a desync error at creation",
          "[collectives][gloo]") {
  am::test::local_cluster cluster(3);
  auto reports = on_processes(first_processes(3), 30s, [&](int p, rank_report&) {
    if (p == 2) {
      join(cluster, p, first_processes(3), "lists", 5s);
    } else {
      while (cluster.checks() == 0) // process 2 issues first, so both lists are seen
        std::this_thread::sleep_for(5ms);
      join(cluster, p, {0, 1}, "lists", 5s);
    }
  });
  for (int p = 0; p < 3; ++p) {
    INFO("process " << p << ": " << reports[p].error_text);
    CHECK_THROWS_AS(rethrow(reports[p]), am::desync_error);
    CHECK_THAT(reports[p].error_text, Catch::Contains("create over processes [0, 1, 2]"));
    CHECK_THAT(reports[p].error_text, Catch::Contains("create over processes [0, 1]"));
  }
}
