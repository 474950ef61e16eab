// What the collectives tests share: host references for every reduction, per-rank reports that
// the test thread checks (Catch2 is not thread-safe), sample inputs, and the dtype and op tables.
// Used by test_gloo_collectives.cpp (results) and test_gloo_collective_failures.cpp (failures).
#pragma once

#include "actormesh/devices/collectives/communicator.hpp"

#include "actormesh/actors/dtype_promotion.hpp"
#include "actormesh/actors/errors.hpp"
#include "actormesh/actors/float16.hpp"
#include "actormesh/devices/collectives/block_split.hpp"
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

namespace am::test::collectives {

using namespace std::chrono_literals;
using am::dtype;
using am::reduce_op;
using bytes = std::vector<std::byte>;
using clock_type = std::chrono::steady_clock;


/// The first `n` process indices.
inline std::vector<int> first_processes(int n) {
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
inline std::vector<rank_report> on_processes(const std::vector<int>& processes, std::chrono::seconds limit,
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
inline void check_clean(const std::vector<rank_report>& reports) {
  for (std::size_t i = 0; i < reports.size(); ++i) {
    INFO("rank thread " << i << " error: " << reports[i].error_text);
    CHECK_FALSE(reports[i].error);
    for (const auto& p : reports[i].problems)
      FAIL_CHECK(p);
  }
}

/// Rethrows a report's error, for CHECK_THROWS_AS on the test thread.
inline void rethrow(const rank_report& r) {
  if (r.error)
    std::rethrow_exception(r.error);
}

// ---- host reference ----------------------------------------------------------------------------

inline std::uint64_t mix(std::uint64_t x) {
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
inline bytes input_of(dtype t, int p, std::size_t count, std::uint64_t seed) {
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
inline bytes expected_all_reduce(dtype t, reduce_op op, int n, std::size_t count, std::uint64_t seed) {
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
inline std::string compare(const bytes& got, const bytes& want, dtype t, const std::string& what) {
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

inline void note(rank_report& report, const std::string& problem) {
  if (!problem.empty())
    report.problems.push_back(problem);
}

inline std::string label(const std::string& op, dtype t, std::size_t count) {
  return op + " " + std::string(am::name(t)) + "[" + std::to_string(count) + "]";
}

inline constexpr dtype all_dtypes[] = {dtype::float32, dtype::float64, dtype::int32,    dtype::int64,
                                dtype::uint8,   dtype::float16, dtype::bfloat16, dtype::bool_};
inline constexpr reduce_op all_ops[] = {reduce_op::sum, reduce_op::mean, reduce_op::max, reduce_op::min};

inline bool accepts(dtype t, reduce_op op) {
  if (op == reduce_op::mean)
    return am::is_floating(t);
  if (op == reduce_op::sum)
    return t != dtype::bool_;
  return true;
}

/// What a rank thread of most tests does first: join `name` over `processes`.
inline am::communicator join(am::test::local_cluster& cluster, int process, const std::vector<int>& processes,
                             const std::string& name, std::chrono::milliseconds timeout = 20s) {
  return am::communicator(cluster.services(process), processes, name, "127.0.0.1", timeout);
}

} // namespace am::test::collectives
