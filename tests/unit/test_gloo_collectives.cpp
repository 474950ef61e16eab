// The collectives engine on host memory: real Gloo over real loopback TCP, several ranks as threads
// of this process (each its own communicator and "process" of an in-memory cluster,
// tests/support/local_cluster_services.hpp). Every collective is checked against a host
// computation at 2, 3 and 4 ranks; the failures are in test_gloo_collective_failures.cpp.
// Catch2 is not thread-safe: rank threads record what they saw, the test thread checks it.
#include "collectives_test_support.hpp"

using namespace am::test::collectives;

// ---- every collective against the host -----------------------------------------------------------

// From 4 ranks up, a buffer whose ring steps would be small goes through Gloo's bcube algorithm,
// the others (and every buffer at 2 or 3 ranks) through its ring; 5 ranks is bcube's odd case.
TEST_CASE("all_reduce matches numpy for every dtype and op at 2, 3, 4 and 5 ranks", "[collectives][gloo]") {
  const int n = GENERATE(2, 3, 4, 5);
  am::test::local_cluster cluster(n);
  auto reports = on_processes(first_processes(n), 90s, [&](int p, rank_report& report) {
    auto comm = join(cluster, p, first_processes(n), "all-reduce");
    std::uint64_t seed = 0;
    for (dtype t : all_dtypes)
      for (reduce_op op : all_ops) {
        if (!accepts(t, op))
          continue;
        for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000},
                                  std::size_t{65537}}) {
          ++seed;
          const bytes in = input_of(t, p, count, seed);
          bytes out(in.size());
          comm.all_reduce(in.data(), out.data(), count, t, op);
          const auto what = label("all_reduce(" + std::string(am::name(op)) + ")", t, count);
          note(report, compare(out, expected_all_reduce(t, op, n, count, seed), t, what));
          // In place, once per dtype and op.
          if (count == 1000) {
            bytes inout = in;
            comm.all_reduce(inout.data(), inout.data(), count, t, op);
            note(report, compare(inout, expected_all_reduce(t, op, n, count, seed), t, what + " in place"));
          }
        }
      }
    // Large enough for several of Gloo's 1 MiB segments per rank.
    const std::size_t big = (std::size_t{1} << 20) + 3;
    const bytes in = input_of(dtype::float32, p, big, 999);
    bytes out(in.size());
    comm.all_reduce(in.data(), out.data(), big, dtype::float32, reduce_op::sum);
    note(report, compare(out, expected_all_reduce(dtype::float32, reduce_op::sum, n, big, 999), dtype::float32,
                         label("all_reduce(sum)", dtype::float32, big)));
    if (comm.broken())
      report.problems.push_back("broken: " + comm.broken_reason());
  });
  check_clean(reports);
}

TEST_CASE("16-bit sums accumulate in float32 and round once", "[collectives][gloo]") {
  // 1 + 2^-8 + 2^-8 is 1 + 2^-7 in bfloat16 when rounded once; rounding after each addition
  // (1 + 2^-8 ties to 1) could give 1.
  am::test::local_cluster cluster(3);
  const float parts[] = {1.0f, 1.0f / 256, 1.0f / 256};
  std::vector<float> got(3);
  auto reports = on_processes(first_processes(3), 30s, [&](int p, rank_report&) {
    auto comm = join(cluster, p, first_processes(3), "round-once");
    std::vector<am::bfloat16> v(64, am::bfloat16(parts[p]));
    comm.all_reduce(v.data(), v.data(), v.size(), dtype::bfloat16, reduce_op::sum);
    got[p] = static_cast<float>(v[63]);
  });
  check_clean(reports);
  for (float g : got)
    CHECK(g == 1.0f + 1.0f / 128);
}

TEST_CASE("16-bit sums and means are numpy's float32 sum then cast, bit for bit, for any values",
          "[collectives][gloo]") {
  // Values spread over 12 binades with full 16-bit precision: their float32 sums round, so only
  // the rank-order sum that numpy does gives these bits.
  const int n = GENERATE(2, 3, 4);
  am::test::local_cluster cluster(n);
  auto inexact = [](dtype t, int p, std::size_t count) {
    bytes out(count * 2);
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint64_t h = mix(static_cast<std::uint64_t>(p) * 7777 + i);
      const float x = std::ldexp(static_cast<float>(h % (1u << 20)) / (1u << 20) - 0.5f, static_cast<int>(h >> 60) - 6);
      if (t == dtype::float16)
        store(out, i, am::float16(x));
      else
        store(out, i, am::bfloat16(x));
    }
    return out;
  };
  auto expected = [&](dtype t, reduce_op op, std::size_t count) {
    std::vector<bytes> ins;
    for (int r = 0; r < n; ++r)
      ins.push_back(inexact(t, r, count));
    bytes out(count * 2);
    am::visit_dtype(t, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, am::float16> || std::is_same_v<T, am::bfloat16>) {
        std::vector<T> values(n);
        for (std::size_t i = 0; i < count; ++i) {
          for (int r = 0; r < n; ++r)
            values[r] = load<T>(ins[r], i);
          store<T>(out, i, reference_reduce(op, values));
        }
      }
    });
    return out;
  };
  const std::size_t count = 10007;
  auto reports = on_processes(first_processes(n), 60s, [&](int p, rank_report& report) {
    auto comm = join(cluster, p, first_processes(n), "inexact");
    for (dtype t : {dtype::float16, dtype::bfloat16})
      for (reduce_op op : {reduce_op::sum, reduce_op::mean}) {
        const bytes in = inexact(t, p, count);
        const bytes want = expected(t, op, count);
        bytes out(in.size());
        comm.all_reduce(in.data(), out.data(), count, t, op);
        const auto what = "(" + std::string(am::name(op)) + ") " + std::string(am::name(t));
        note(report, compare(out, want, t, "all_reduce" + what));
        const auto block = am::split_block(count, n, p);
        bytes part(block.count * 2);
        comm.reduce_scatter(in.data(), part.data(), count, t, op);
        note(report, compare(part, bytes(want.begin() + block.offset * 2, want.begin() + (block.offset + block.count) * 2),
                             t, "reduce_scatter" + what));
      }
  });
  check_clean(reports);
}

TEST_CASE("max and min propagate NaN and order signed zeros", "[collectives][gloo]") {
  am::test::local_cluster cluster(2);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> values[2] = {{nan, -0.0, 1.0, 0.0, -3.0}, {2.0, 0.0, nan, -0.0, -2.0}};
  auto reports = on_processes(first_processes(2), 30s, [&](int p, rank_report& report) {
    auto comm = join(cluster, p, first_processes(2), "nan");
    for (dtype t : {dtype::float32, dtype::float64, dtype::float16, dtype::bfloat16}) {
      am::visit_dtype(t, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_integral_v<T>) {
          for (reduce_op op : {reduce_op::max, reduce_op::min}) {
            std::vector<T> v;
            for (double x : values[p])
              v.push_back(static_cast<T>(x));
            comm.all_reduce(v.data(), v.data(), v.size(), t, op);
            const bool is_max = op == reduce_op::max;
            const std::string what = label(std::string("all_reduce(") + (is_max ? "max" : "min") + ")", t, 5);
            if (!nan_of(v[0]) || !nan_of(v[2]))
              report.problems.push_back(what + ": NaN did not win");
            if (negative(v[1]) == is_max || negative(v[3]) == is_max || static_cast<double>(v[1]) != 0.0)
              report.problems.push_back(what + ": signed zeros combined wrongly");
            if (static_cast<double>(v[4]) != (is_max ? -2.0 : -3.0))
              report.problems.push_back(what + ": wrong extreme");
          }
        }
      });
    }
  });
  check_clean(reports);
}

TEST_CASE("all_gather concatenates every rank's buffer in rank order", "[collectives][gloo]") {
  const int n = GENERATE(2, 3, 4);
  am::test::local_cluster cluster(n);
  auto reports = on_processes(first_processes(n), 60s, [&](int p, rank_report& report) {
    auto comm = join(cluster, p, first_processes(n), "all-gather");
    std::uint64_t seed = 100;
    for (dtype t : all_dtypes)
      for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{1000},
                                std::size_t{65537}}) {
        ++seed;
        bytes want;
        for (int r = 0; r < n; ++r) {
          const bytes part = input_of(t, r, count, seed);
          want.insert(want.end(), part.begin(), part.end());
        }
        const bytes in = input_of(t, p, count, seed);
        bytes out(want.size());
        comm.all_gather(in.data(), out.data(), count, t);
        note(report, compare(out, want, t, label("all_gather", t, count)));
        // In place: the input is this rank's own slot of the output.
        bytes inout(want.size());
        std::copy(in.begin(), in.end(), inout.begin() + p * in.size());
        comm.all_gather(inout.data() + p * in.size(), inout.data(), count, t);
        note(report, compare(inout, want, t, label("all_gather", t, count) + " in place"));
      }
  });
  check_clean(reports);
}

TEST_CASE("reduce_scatter gives rank r block r of the reduction, for any count", "[collectives][gloo]") {
  // Counts not divisible by the number of ranks split like numpy.array_split (the first
  // count % n blocks one longer); counts below n leave the last ranks an empty block.
  const int n = GENERATE(2, 3, 4);
  am::test::local_cluster cluster(n);
  auto reports = on_processes(first_processes(n), 90s, [&](int p, rank_report& report) {
    auto comm = join(cluster, p, first_processes(n), "reduce-scatter");
    std::uint64_t seed = 200;
    const std::size_t un = static_cast<std::size_t>(n);
    for (dtype t : all_dtypes)
      for (reduce_op op : all_ops) {
        if (!accepts(t, op))
          continue;
        for (std::size_t count : {std::size_t{0}, std::size_t{1}, un - 1, un, un + 1, std::size_t{10},
                                  std::size_t{1001}, std::size_t{65539}}) {
          ++seed;
          const auto block = am::split_block(count, n, p);
          const bytes all = expected_all_reduce(t, op, n, count, seed);
          const std::size_t element = am::size_of(t);
          const bytes want(all.begin() + block.offset * element, all.begin() + (block.offset + block.count) * element);
          const bytes in = input_of(t, p, count, seed);
          bytes out(block.count * element);
          comm.reduce_scatter(in.data(), out.data(), count, t, op);
          const auto what = label("reduce_scatter(" + std::string(am::name(op)) + ")", t, count);
          note(report, compare(out, want, t, what));
          if (count == 1001) {
            bytes inout = in;
            comm.reduce_scatter(inout.data(), inout.data(), count, t, op);
            inout.resize(want.size());
            note(report, compare(inout, want, t, what + " in place"));
          }
        }
      }
  });
  check_clean(reports);
}

TEST_CASE("split_block splits like numpy.array_split", "[collectives]") {
  CHECK(am::split_block(10, 4, 0).offset == 0);
  CHECK(am::split_block(10, 4, 0).count == 3);
  CHECK(am::split_block(10, 4, 1).offset == 3);
  CHECK(am::split_block(10, 4, 1).count == 3);
  CHECK(am::split_block(10, 4, 2).offset == 6);
  CHECK(am::split_block(10, 4, 2).count == 2);
  CHECK(am::split_block(10, 4, 3).offset == 8);
  CHECK(am::split_block(10, 4, 3).count == 2);
  CHECK(am::split_block(2, 4, 3).count == 0);
  CHECK(am::split_block(2, 4, 3).offset == 2);
}

TEST_CASE("broadcast copies the root's buffer to every rank, from every root", "[collectives][gloo]") {
  const int n = GENERATE(2, 3, 4);
  am::test::local_cluster cluster(n);
  auto reports = on_processes(first_processes(n), 60s, [&](int p, rank_report& report) {
    auto comm = join(cluster, p, first_processes(n), "broadcast");
    std::uint64_t seed = 300;
    for (dtype t : {dtype::float32, dtype::int64, dtype::bfloat16, dtype::bool_, dtype::uint8})
      for (int root = 0; root < n; ++root)
        for (std::size_t count : {std::size_t{0}, std::size_t{3}, std::size_t{10000}}) {
          ++seed;
          bytes buffer = input_of(t, p, count, seed);
          comm.broadcast(buffer.data(), count, t, root);
          note(report, compare(buffer, input_of(t, root, count, seed), t,
                               label("broadcast", t, count) + " root=" + std::to_string(root)));
        }
  });
  check_clean(reports);
}

TEST_CASE("all_to_all sends block j to rank j", "[collectives][gloo]") {
  const int n = GENERATE(2, 3, 4);
  am::test::local_cluster cluster(n);
  auto reports = on_processes(first_processes(n), 60s, [&](int p, rank_report& report) {
    auto comm = join(cluster, p, first_processes(n), "all-to-all");
    std::uint64_t seed = 400;
    const std::size_t un = static_cast<std::size_t>(n);
    for (dtype t : {dtype::float32, dtype::uint8, dtype::int64, dtype::float16})
      for (std::size_t count : {std::size_t{0}, un, 7 * un, 1000 * un}) {
        ++seed;
        const std::size_t element = am::size_of(t);
        const std::size_t block = count / un * element;
        bytes want(count * element);
        for (int r = 0; r < n; ++r) {
          const bytes theirs = input_of(t, r, count, seed);
          std::copy_n(theirs.begin() + p * block, block, want.begin() + r * block);
        }
        const bytes in = input_of(t, p, count, seed);
        bytes out(in.size());
        comm.all_to_all(in.data(), out.data(), count, t);
        note(report, compare(out, want, t, label("all_to_all", t, count)));
      }
  });
  check_clean(reports);
}

TEST_CASE("send and recv carry tagged messages between two ranks, in order", "[collectives][gloo]") {
  const int n = GENERATE(2, 3, 4);
  am::test::local_cluster cluster(n);
  auto reports = on_processes(first_processes(n), 60s, [&](int p, rank_report& report) {
    auto comm = join(cluster, p, first_processes(n), "p2p");
    const int next = (p + 1) % n, prev = (p + n - 1) % n;
    for (std::size_t count : {std::size_t{0}, std::size_t{5}, std::size_t{100000}}) {
      // Around the ring: rank 0 sends first, every other rank receives first.
      const bytes mine = input_of(dtype::float32, p, count, count);
      bytes theirs(mine.size());
      for (std::uint32_t tag : {1u, 2u}) {
        if (p == 0) {
          comm.send(mine.data(), count, dtype::float32, next, tag);
          comm.recv(theirs.data(), count, dtype::float32, prev, tag);
        } else {
          comm.recv(theirs.data(), count, dtype::float32, prev, tag);
          comm.send(mine.data(), count, dtype::float32, next, tag);
        }
        note(report, compare(theirs, input_of(dtype::float32, prev, count, count), dtype::float32,
                             label("recv", dtype::float32, count) + " tag=" + std::to_string(tag)));
      }
    }
    // Two messages of one tag in a row arrive in order.
    if (p == 0) {
      std::int64_t a = 11, b = 22;
      comm.send(&a, 1, dtype::int64, 1, 9);
      comm.send(&b, 1, dtype::int64, 1, 9);
    } else if (p == 1) {
      std::int64_t a = 0, b = 0;
      comm.recv(&a, 1, dtype::int64, 0, 9);
      comm.recv(&b, 1, dtype::int64, 0, 9);
      if (a != 11 || b != 22)
        report.problems.push_back("messages of one tag arrived out of order");
    }
  });
  check_clean(reports);
}

TEST_CASE("a communicator over a subset of processes ranks them by their position", "[collectives][gloo]") {
  am::test::local_cluster cluster(4);
  std::vector<int> ranks(4, -1);
  std::vector<std::int64_t> sums(4, 0);
  auto reports = on_processes(first_processes(4), 30s, [&](int p, rank_report&) {
    const std::vector<int> group = p % 2 ? std::vector<int>{1, 3} : std::vector<int>{0, 2};
    auto comm = join(cluster, p, group, p % 2 ? "odd" : "even");
    ranks[p] = comm.rank();
    std::int64_t v = 10 + p;
    comm.all_reduce(&v, &v, 1, dtype::int64, reduce_op::sum);
    sums[p] = v;
  });
  check_clean(reports);
  CHECK(ranks == std::vector<int>{0, 0, 1, 1});
  CHECK(sums == std::vector<std::int64_t>{22, 24, 22, 24});
}

TEST_CASE("a communicator of one process runs every collective locally", "[collectives][gloo]") {
  am::test::local_cluster cluster(1);
  auto comm = join(cluster, 0, {0}, "solo");
  CHECK(comm.size() == 1);
  std::vector<float> in{1.5f, -2.0f, 3.0f}, out(3);
  comm.all_reduce(in.data(), out.data(), 3, dtype::float32, reduce_op::mean);
  CHECK(out == in);
  comm.all_gather(in.data(), out.data(), 3, dtype::float32);
  CHECK(out == in);
  comm.reduce_scatter(in.data(), out.data(), 3, dtype::float32, reduce_op::max);
  CHECK(out == in);
  comm.broadcast(out.data(), 3, dtype::float32, 0);
  CHECK(out == in);
  comm.all_to_all(in.data(), out.data(), 3, dtype::float32);
  CHECK(out == in);
  CHECK(comm.steps() == 5);
  CHECK_THROWS_AS(comm.send(in.data(), 3, dtype::float32, 0), am::value_error);
}
