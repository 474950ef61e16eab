// The collectives engine on host memory: real Gloo over real loopback TCP, several ranks as threads
// of this process (each its own communicator and "process" of an in-memory cluster,
// tests/support/local_cluster_services.hpp). Every collective is checked against a host
// computation at 2, 3 and 4 ranks; then timeouts, desync, failed processes and bad arguments.
// Catch2 is not thread-safe: rank threads record what they saw, the test thread checks it.
#include "devices/collectives/communicator.hpp"

#include "actors/dtype_promotion.hpp"
#include "actors/errors.hpp"
#include "actors/float16.hpp"
#include "devices/collectives/block_split.hpp"
#include "support/local_cluster_services.hpp"
#include "support/watchdog.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

using namespace std::chrono_literals;
using am::dtype;
using am::reduce_op;
using bytes = std::vector<std::byte>;
using clock_type = std::chrono::steady_clock;

namespace {

/// The first `n` process indices.
std::vector<int> first_processes(int n) {
  std::vector<int> out(n);
  for (int i = 0; i < n; ++i)
    out[i] = i;
  return out;
}

/// What one rank thread saw: problems found (empty when all matched) or the error it threw.
struct rank_report {
  std::vector<std::string> problems;
  std::exception_ptr error;
  std::string error_text;
  double seconds = 0; ///< how long its failing (or last) call took
};

/// Runs `body(process, report)` on one thread per process of `processes`, all within `limit`
/// (the process exits naming the test if not), and returns each thread's report.
std::vector<rank_report> on_processes(const std::vector<int>& processes, std::chrono::seconds limit,
                                      const std::function<void(int, rank_report&)>& body) {
  std::vector<rank_report> reports(processes.size());
  am::test::run_bounded(Catch::getResultCapture().getCurrentTestName(), limit, [&] {
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < processes.size(); ++i)
      threads.emplace_back([&, i] {
        try {
          body(processes[i], reports[i]);
        } catch (const std::exception& e) {
          reports[i].error = std::current_exception();
          reports[i].error_text = e.what();
        } catch (...) {
          reports[i].error = std::current_exception();
          reports[i].error_text = "unknown exception";
        }
      });
    for (auto& t : threads)
      t.join();
  });
  return reports;
}

/// Every report clean: no problem, no error.
void check_clean(const std::vector<rank_report>& reports) {
  for (std::size_t i = 0; i < reports.size(); ++i) {
    INFO("rank thread " << i << " error: " << reports[i].error_text);
    CHECK_FALSE(reports[i].error);
    for (const auto& p : reports[i].problems)
      FAIL_CHECK(p);
  }
}

/// Rethrows a report's error, for CHECK_THROWS_AS on the test thread.
void rethrow(const rank_report& r) {
  if (r.error)
    std::rethrow_exception(r.error);
}

// ---- host reference ----------------------------------------------------------------------------

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Element i of process p's input in case `seed`. Floats are k/64 (k/1024 for float16) with few
/// significant bits, so sums of up to 4 ranks are exact in float32 whatever the order Gloo adds
/// them in, and the result depends only on how it is rounded to the dtype; integers span their
/// whole range, so sums wrap.
template <class T>
T sample(int p, std::size_t i, std::uint64_t seed) {
  const std::uint64_t h = mix(seed * 1000003u + static_cast<std::uint64_t>(p) * 0x100000001b3ull + i);
  if constexpr (std::is_same_v<T, bool>)
    return (h & 1) != 0;
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(h);
  else if constexpr (std::is_same_v<T, am::float16>)
    return am::float16(static_cast<float>(static_cast<int>(h % 4095) - 2047) / 1024.0f);
  else if constexpr (std::is_same_v<T, am::bfloat16>)
    return am::bfloat16(static_cast<float>(static_cast<int>(h % 511) - 255) / 64.0f);
  else
    return static_cast<T>(static_cast<int>(h % 511) - 255) / static_cast<T>(64);
}

template <class T>
T load(const bytes& b, std::size_t i) {
  T v;
  std::memcpy(&v, b.data() + i * sizeof(T), sizeof(T));
  return v;
}

template <class T>
void store(bytes& b, std::size_t i, T v) {
  std::memcpy(b.data() + i * sizeof(T), &v, sizeof(T));
}

/// Process p's input of `count` elements.
bytes input_of(dtype t, int p, std::size_t count, std::uint64_t seed) {
  bytes out(count * am::size_of(t));
  am::visit_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (std::size_t i = 0; i < count; ++i)
      store<T>(out, i, sample<T>(p, i, seed));
  });
  return out;
}

template <class T>
bool nan_of(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(x);
  else if constexpr (std::is_integral_v<T>)
    return false;
  else
    return am::isnan(x);
}

template <class T>
bool negative(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return std::signbit(x);
  else if constexpr (std::is_integral_v<T>)
    return x < 0;
  else
    return (x.bits() & 0x8000) != 0;
}

/// max/min as numpy would combine ranks in order with NaN propagating and +0 > -0.
template <class T>
T reference_extreme(T a, T b, bool want_max) {
  if constexpr (std::is_same_v<T, bool>) {
    return want_max ? (a || b) : (a && b);
  } else {
    if (nan_of(a))
      return a;
    if (nan_of(b))
      return b;
    const double x = static_cast<double>(a), y = static_cast<double>(b);
    if constexpr (!std::is_integral_v<T>)
      if (x == y)
        return (negative(a) == want_max) ? b : a;
    if constexpr (std::is_integral_v<T>)
      return want_max ? (a < b ? b : a) : (b < a ? b : a);
    else
      return want_max ? (x < y ? b : a) : (y < x ? b : a);
  }
}

/// The reduction of `values` (one per rank, in rank order) as numpy computes it: sums in rank
/// order, integers wrapping, float16/bfloat16 in float32 and cast once.
template <class T>
T reference_reduce(reduce_op op, const std::vector<T>& values) {
  const auto n = static_cast<int>(values.size());
  if (op == reduce_op::max || op == reduce_op::min) {
    T acc = values[0];
    for (int r = 1; r < n; ++r)
      acc = reference_extreme(acc, values[r], op == reduce_op::max);
    return acc;
  }
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    U acc = 0;
    for (T v : values)
      acc = static_cast<U>(acc + static_cast<U>(v));
    return static_cast<T>(acc);
  } else if constexpr (std::is_same_v<T, bool>) {
    return values[0]; // no bool sums
  } else {
    using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;
    acc_t acc = 0;
    for (T v : values)
      acc += static_cast<acc_t>(v);
    if (op == reduce_op::mean)
      acc /= static_cast<acc_t>(n);
    return T(acc);
  }
}

/// The all_reduce result of `n` ranks.
bytes expected_all_reduce(dtype t, reduce_op op, int n, std::size_t count, std::uint64_t seed) {
  bytes out(count * am::size_of(t));
  am::visit_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> values(n);
    for (std::size_t i = 0; i < count; ++i) {
      for (int r = 0; r < n; ++r)
        values[r] = sample<T>(r, i, seed);
      store<T>(out, i, reference_reduce(op, values));
    }
  });
  return out;
}

/// "" when equal, else where the first difference is.
std::string compare(const bytes& got, const bytes& want, dtype t, const std::string& what) {
  if (got.size() != want.size())
    return what + ": " + std::to_string(got.size()) + " bytes, expected " + std::to_string(want.size());
  const std::size_t element = am::size_of(t);
  for (std::size_t i = 0; i < got.size(); i += element)
    if (std::memcmp(got.data() + i, want.data() + i, element) != 0) {
      std::string detail;
      am::visit_dtype(t, [&](auto tag) {
        using T = typename decltype(tag)::type;
        detail = std::to_string(static_cast<double>(load<T>(got, i / element))) + " instead of "
                 + std::to_string(static_cast<double>(load<T>(want, i / element)));
      });
      return what + ": element " + std::to_string(i / element) + " is " + detail;
    }
  return "";
}

void note(rank_report& report, const std::string& problem) {
  if (!problem.empty())
    report.problems.push_back(problem);
}

std::string label(const std::string& op, dtype t, std::size_t count) {
  return op + " " + std::string(am::name(t)) + "[" + std::to_string(count) + "]";
}

constexpr dtype all_dtypes[] = {dtype::float32, dtype::float64, dtype::int32,    dtype::int64,
                                dtype::uint8,   dtype::float16, dtype::bfloat16, dtype::bool_};
constexpr reduce_op all_ops[] = {reduce_op::sum, reduce_op::mean, reduce_op::max, reduce_op::min};

bool accepts(dtype t, reduce_op op) {
  if (op == reduce_op::mean)
    return am::is_floating(t);
  if (op == reduce_op::sum)
    return t != dtype::bool_;
  return true;
}

/// What a rank thread of most tests does first: join `name` over `processes`.
am::communicator join(am::test::local_cluster& cluster, int process, const std::vector<int>& processes,
                      const std::string& name, std::chrono::milliseconds timeout = 20s) {
  return am::communicator(cluster.services(process), processes, name, "127.0.0.1", timeout);
}

} // namespace

// ---- every collective against the host -----------------------------------------------------------

TEST_CASE("all_reduce matches numpy for every dtype and op at 2, 3 and 4 ranks", "[collectives][gloo]") {
  const int n = GENERATE(2, 3, 4);
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
    CHECK_THAT(reports[p].error_text, Catch::Contains("processes [2] never issued it"));
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
    CHECK_THAT(reports[p].error_text, Catch::Contains("process 0 issued 'all_reduce(sum) float32[8]'"));
    CHECK_THAT(reports[p].error_text, Catch::Contains("process 1 issued 'all_reduce(max) float32[8]'"));
    CHECK_THAT(reports[p].error_text, Catch::Contains("process 2 issued 'all_gather float32[8]'"));
    CHECK_THAT(reports[p].error_text, Catch::Contains("step 1 of communicator 'desync'"));
    CHECK(broken[p]);
  }
}

TEST_CASE("a process that fails while the others move bytes fails them at once, naming it",
          "[collectives][gloo]") {
  am::test::local_cluster cluster(3);
  auto reports = on_processes(first_processes(3), 30s, [&](int p, rank_report& report) {
    auto comm = join(cluster, p, first_processes(3), "dies");
    cluster.services(p).barrier("joined", 10s);
    std::thread killer;
    if (p == 2) {
      // Agrees to the collective, then stalls before moving its bytes; the test marks it failed.
      cluster.stall_after_check(2, 3s);
      killer = std::thread([&] {
        std::this_thread::sleep_for(300ms);
        cluster.fail(2);
      });
    }
    std::vector<float> v(1 << 16, 1.0f);
    const auto start = clock_type::now();
    try {
      comm.all_reduce(v.data(), v.data(), v.size(), dtype::float32, reduce_op::sum, 20s);
    } catch (...) {
      report.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
      if (killer.joinable())
        killer.join();
      throw;
    }
    if (killer.joinable())
      killer.join();
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
  CHECK(reports[2].error); // the stalled rank fails too
}

TEST_CASE("a rank late to move its bytes: Gloo's timeout becomes a timeout error naming the operation",
          "[collectives][gloo]") {
  am::test::local_cluster cluster(3);
  auto reports = on_processes(first_processes(3), 30s, [&](int p, rank_report& report) {
    auto comm = join(cluster, p, first_processes(3), "late");
    cluster.services(p).barrier("joined", 10s);
    if (p == 2)
      cluster.stall_after_check(2, 2500ms);
    std::vector<double> v(1000, 1.0);
    const auto start = clock_type::now();
    try {
      comm.all_reduce(v.data(), v.data(), v.size(), dtype::float64, reduce_op::sum, 800ms);
    } catch (...) {
      report.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
      throw;
    }
  });
  for (int p = 0; p < 2; ++p) {
    INFO("process " << p << ": " << reports[p].error_text);
    CHECK_THROWS_AS(rethrow(reports[p]), am::timeout_error);
    CHECK_THAT(reports[p].error_text, Catch::Contains("all_reduce(sum) float64[1000] (step 1 of communicator 'late'"));
    CHECK_THAT(reports[p].error_text, Catch::Contains("Gloo")); // timed out, or closed by a peer that did
    CHECK(reports[p].seconds < 2.5);
  }
  INFO("process 2: " << reports[2].error_text);
  CHECK_THROWS_AS(rethrow(reports[2]), am::error);
}

TEST_CASE("two ranks that both send first time out instead of hanging", "[collectives][gloo]") {
  am::test::local_cluster cluster(2);
  auto reports = on_processes(first_processes(2), 30s, [&](int p, rank_report&) {
    auto comm = join(cluster, p, first_processes(2), "both-send");
    float x = 1.0f;
    comm.send(&x, 1, dtype::float32, 1 - p, 0, 500ms);
  });
  for (int p = 0; p < 2; ++p) {
    INFO("process " << p << ": " << reports[p].error_text);
    CHECK_THROWS_AS(rethrow(reports[p]), am::timeout_error);
    CHECK_THAT(reports[p].error_text, Catch::Contains("processes [" + std::to_string(1 - p) + "] never issued it"));
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
