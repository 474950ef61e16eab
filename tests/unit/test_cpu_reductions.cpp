// The float reductions of the CPU devices: the vector kernels of every instruction set this CPU
// has (devices/cpu/cpu_reduce_kernels.inc) against a plain reference, for every axis choice and for
// sizes around the vector widths; NaN and infinities as jax.numpy treats them; pairwise sums; and
// the same through sharded arrays, with jax.numpy's refusals of max/min over empty axes.
#include "support/arrays.hpp"

#include "devices/cpu/cpu_buffer.hpp"
#include "devices/cpu/cpu_kernels.hpp"
#include "devices/cpu/cpu_stages.hpp"
#include "devices/detail/buffer_pool.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using am::opcode;
using am::detail::cpu_isa;

namespace {

std::vector<cpu_isa> supported_isas() {
  std::vector<cpu_isa> out;
  for (auto isa : {cpu_isa::scalar, cpu_isa::avx2, cpu_isa::avx512})
    if (am::detail::isa_supported(isa))
      out.push_back(isa);
  return out;
}

std::shared_ptr<am::detail::buffer_pool> test_pool() {
  static auto pool = std::make_shared<am::detail::buffer_pool>(0, 0);
  return pool;
}

/// Reduces `in` (shape `s`) over `axes` on the CPU stage with the kernels of `isa`.
template <class T>
std::vector<T> device_reduce(opcode op, const std::vector<T>& in, const am::shape_t& s,
                             const std::vector<std::int64_t>& axes, cpu_isa isa) {
  constexpr am::dtype dt = am::dtype_of<T>();
  auto buf = am::detail::make_cpu_buffer(dt, s, test_pool());
  if (!in.empty())
    std::memcpy(buf->data(), in.data(), in.size() * sizeof(T));
  am::shape_t kept;
  for (std::size_t d = 0; d < s.size(); ++d)
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(d)))
      kept.push_back(s[d]);
  auto out = am::detail::make_cpu_buffer(dt, kept, test_pool());
  am::detail::reduce(op, *buf, *out, axes, isa);
  std::vector<T> got(static_cast<std::size_t>(out->size()));
  if (!got.empty())
    std::memcpy(got.data(), out->data(), got.size() * sizeof(T));
  return got;
}

/// The reference: sums in long double, max/min as jax.numpy (NaN wins), in index order.
template <class T>
std::vector<T> reference_reduce(opcode op, const std::vector<T>& in, const am::shape_t& s,
                                const std::vector<std::int64_t>& axes) {
  am::shape_t kept;
  for (std::size_t d = 0; d < s.size(); ++d)
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(d)))
      kept.push_back(s[d]);
  auto init = op == opcode::reduce_sum ? 0.0L
              : op == opcode::reduce_max ? -std::numeric_limits<long double>::infinity()
                                         : std::numeric_limits<long double>::infinity();
  std::vector<long double> acc(static_cast<std::size_t>(am::element_count(kept)), init);
  std::vector<std::int64_t> idx(s.size(), 0);
  for (std::size_t i = 0; i < in.size(); ++i) {
    std::int64_t o = 0;
    for (std::size_t d = 0; d < s.size(); ++d)
      if (!std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(d)))
        o = o * s[d] + idx[d];
    auto& a = acc[static_cast<std::size_t>(o)];
    long double v = in[i];
    if (op == opcode::reduce_sum)
      a += v;
    else if (std::isnan(a) || std::isnan(v))
      a = std::numeric_limits<long double>::quiet_NaN();
    else
      a = op == opcode::reduce_max ? std::max(a, v) : std::min(a, v);
    for (auto d = static_cast<std::ptrdiff_t>(s.size()) - 1; d >= 0; --d) {
      if (++idx[static_cast<std::size_t>(d)] < s[static_cast<std::size_t>(d)])
        break;
      idx[static_cast<std::size_t>(d)] = 0;
    }
  }
  return std::vector<T>(acc.begin(), acc.end());
}

/// Sums within `rtol` of the reference (relative to the sum of magnitudes); max/min exactly.
template <class T>
void check_close(opcode op, const std::vector<T>& got, const std::vector<T>& want, const std::vector<T>& in,
                 double rtol, const std::string& what) {
  INFO(what);
  REQUIRE(got.size() == want.size());
  double scale = 0;
  for (auto v : in)
    scale = std::max(scale, std::fabs(static_cast<double>(v)));
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(got[i]));
    } else if (op == opcode::reduce_sum) {
      CHECK(std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i]))
            <= rtol * scale * static_cast<double>(in.size()) + 1e-30);
    } else {
      CHECK(got[i] == want[i]);
    }
  }
}

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v)
    x = static_cast<T>(d(rng));
  return v;
}

am::shape_t s_of(std::int64_t rows, std::int64_t cols) {
  return {rows, cols};
}

const char* name_of(opcode op) {
  return op == opcode::reduce_sum ? "sum" : op == opcode::reduce_max ? "max" : "min";
}

template <class T>
void check_all_axes(const am::shape_t& s, unsigned seed) {
  auto in = random_values<T>(static_cast<std::size_t>(am::element_count(s)), seed);
  std::vector<std::vector<std::int64_t>> choices;
  for (unsigned mask = 0; mask < (1u << s.size()); ++mask) { // every subset of the axes
    std::vector<std::int64_t> axes;
    for (std::size_t d = 0; d < s.size(); ++d)
      if (mask & (1u << d))
        axes.push_back(static_cast<std::int64_t>(d));
    choices.push_back(axes);
  }
  const double eps = std::numeric_limits<T>::epsilon();
  for (auto isa : supported_isas())
    for (auto op : {opcode::reduce_sum, opcode::reduce_max, opcode::reduce_min})
      for (auto& axes : choices) {
        std::string what = std::string(am::detail::isa_name(isa)) + " " + name_of(op) + " of "
                           + std::string(am::name(am::dtype_of<T>())) + " shape";
        for (auto e : s)
          what += " " + std::to_string(e);
        what += ", axes";
        for (auto a : axes)
          what += " " + std::to_string(a);
        check_close(op, device_reduce(op, in, s, axes, isa), reference_reduce(op, in, s, axes), in, 4 * eps, what);
      }
}

} // namespace

TEST_CASE("float reductions over every axis choice and odd sizes match the reference on every instruction set",
          "[cpu][reductions]") {
  unsigned seed = 1;
  for (auto s : std::vector<am::shape_t>{{1}, {7}, {15}, {16}, {17}, {63}, {64}, {65}, {1023}, {1025}, {4097},
                                         {3, 5}, {37, 53}, {9, 130}, {130, 9}, {8, 64}, {1, 33}, {33, 1},
                                         {3, 5, 7}, {2, 17, 33}, {5, 1, 19}, {4, 3, 2, 9}}) {
    check_all_axes<float>(s, seed++);
    check_all_axes<double>(s, seed++);
  }
}

TEST_CASE("max and min propagate NaN from any position, infinities reduce as IEEE says", "[cpu][reductions]") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (auto isa : supported_isas()) {
    INFO(am::detail::isa_name(isa));
    for (std::size_t n : {1u, 5u, 16u, 31u, 64u, 65u, 200u, 1031u}) {
      for (std::size_t at = 0; at < n; at += std::max<std::size_t>(1, n / 7)) {
        std::vector<float> v(n, 1.0f);
        v[at] = nan;
        for (auto op : {opcode::reduce_max, opcode::reduce_min, opcode::reduce_sum}) {
          INFO("n " << n << ", NaN at " << at << ", " << name_of(op));
          CHECK(std::isnan(device_reduce(op, v, {static_cast<std::int64_t>(n)}, {0}, isa)[0]));
          // Down the columns of a (n, 3) array, NaN in column 1 only.
          std::vector<float> m(n * 3, 2.0f);
          m[at * 3 + 1] = nan;
          auto cols = device_reduce(op, m, {static_cast<std::int64_t>(n), 3}, {0}, isa);
          CHECK_FALSE(std::isnan(cols[0]));
          CHECK(std::isnan(cols[1]));
          CHECK_FALSE(std::isnan(cols[2]));
        }
      }
    }
    std::vector<float> v(100, 0.5f);
    v[3] = inf;
    v[70] = -inf;
    CHECK(device_reduce(opcode::reduce_max, v, {100}, {0}, isa)[0] == inf);
    CHECK(device_reduce(opcode::reduce_min, v, {100}, {0}, isa)[0] == -inf);
    CHECK(std::isnan(device_reduce(opcode::reduce_sum, v, {100}, {0}, isa)[0])); // inf + -inf
    std::vector<float> lows(40, -inf);
    CHECK(device_reduce(opcode::reduce_max, lows, {40}, {0}, isa)[0] == -inf);
    CHECK(device_reduce(opcode::reduce_sum, lows, {40}, {0}, isa)[0] == -inf);
  }
}

TEST_CASE("float32 sums of long runs are pairwise on the vector instruction sets", "[cpu][reductions]") {
  // 2^22 values in [0, 1): a plain loop drifts by ~3e-6 here; pairwise summation stays within a
  // few roundings.
  const std::size_t n = std::size_t{1} << 22;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  double exact = 0;
  for (auto& x : v) {
    x = d(rng);
    exact += x;
  }
  // 2^22 copies of 1 + 2^-12: every partial sum of a pairwise tree is a power-of-two multiple of
  // it and exact, while any accumulator that reaches 2^13 drops the 2^-12 of every later add (a
  // plain loop or 16 fixed lanes give about 2^22 + 0).
  std::vector<float> same(n, 1.0f + 1.0f / 4096.0f);
  for (auto isa : supported_isas()) {
    if (isa == cpu_isa::scalar)
      continue; // the baseline sums in 16 fixed lanes (documented in cpu_stages.hpp)
    INFO(am::detail::isa_name(isa));
    auto got = device_reduce(opcode::reduce_sum, v, {static_cast<std::int64_t>(n)}, {0}, isa)[0];
    CHECK(std::fabs(got - exact) / exact < 1e-6);
    CHECK(device_reduce(opcode::reduce_sum, same, {static_cast<std::int64_t>(n)}, {0}, isa)[0]
          == 4194304.0f + 1024.0f);
  }
}

TEST_CASE("sharded float reductions over every axis match the host, NaN included", "[array][reductions]") {
  am::runtime rt(am::testing::eight_cpus());
  am::mesh m(am::create_device_mesh({8}, am::devices(am::platform::cpu)), {"x"});
  struct layout {
    std::int64_t rows, cols;
    am::partition_spec spec;
  };
  for (auto& l : {layout{16, 37, am::P("x")}, layout{16, 37, am::P()}, layout{6, 40, am::P(am::none, "x")}}) {
    INFO("shape " << l.rows << "x" << l.cols << ", " << l.spec.to_string());
    auto v = random_values<float>(static_cast<std::size_t>(l.rows * l.cols), 11);
    v[static_cast<std::size_t>(5 * l.cols + 20)] = std::numeric_limits<float>::quiet_NaN();
    auto x = am::device_put(am::host_array::from_vector(v, {l.rows, l.cols}), am::make_named_sharding(m, l.spec));
    for (auto& axes : std::vector<std::vector<std::int64_t>>{{}, {0}, {1}, {-1}, {0, 1}}) {
      std::vector<std::int64_t> sorted;
      for (auto a : axes)
        sorted.push_back(a < 0 ? a + 2 : a);
      std::sort(sorted.begin(), sorted.end());
      am::shape_t s{l.rows, l.cols};
      check_close(opcode::reduce_max, am::max(x, axes).to_host().to_vector<float>(),
                  reference_reduce(opcode::reduce_max, v, s, sorted), v, 0, "max");
      check_close(opcode::reduce_min, am::min(x, axes).to_host().to_vector<float>(),
                  reference_reduce(opcode::reduce_min, v, s, sorted), v, 0, "min");
      check_close(opcode::reduce_sum, am::sum(x, axes).to_host().to_vector<float>(),
                  reference_reduce(opcode::reduce_sum, v, s, sorted), v, 1e-6, "sum");
    }
    CHECK(std::isnan(am::max(x).to_host().to_vector<float>()[0]));
    auto col_max = am::max(x, {0}).to_host().to_vector<float>();
    CHECK(std::isnan(col_max[20]));
    CHECK_FALSE(std::isnan(col_max[19]));
    auto means = am::mean(x, {1}).to_host().to_vector<float>();
    CHECK(std::isnan(means[5]));
    CHECK(std::fabs(means[0] - reference_reduce(opcode::reduce_sum, v, s_of(l.rows, l.cols), {1})[0]
                                 / static_cast<float>(l.cols)) < 1e-6);
  }
}

TEST_CASE("max and min over an empty axis are refused with jax.numpy's words, other empty shapes reduce",
          "[array][reductions]") {
  am::runtime rt(am::testing::eight_cpus());
  auto d = am::devices(am::platform::cpu)[0];
  auto put = [&](am::shape_t s) { return am::device_put(am::host_array::zeros(s, am::dtype::float32), d); };
  const std::string max_words = "zero-size array to reduction operation max which has no identity";
  const std::string min_words = "zero-size array to reduction operation min which has no identity";
  CHECK_THROWS_WITH(am::max(put({0})), max_words);
  CHECK_THROWS_WITH(am::min(put({0})), min_words);
  CHECK_THROWS_WITH(am::max(put({0, 3}), {0}), max_words);
  CHECK_THROWS_WITH(am::min(put({3, 0}), {1}), min_words);
  CHECK_THROWS_WITH(am::max(put({0, 0}), {0}), max_words);
  CHECK_THROWS_WITH(am::max(put({2, 0, 3}), {1}), max_words);
  // The reduced axes are not empty: an empty result, as jax.numpy gives.
  CHECK(am::max(put({0, 3}), {1}).shape() == am::shape_t{0});
  CHECK(am::min(put({3, 0}), {0}).shape() == am::shape_t{0});
  CHECK(am::max(put({2, 0, 3}), {0, 2}).shape() == am::shape_t{0});
  // Sums have an identity: zeros; the mean of nothing is NaN.
  CHECK(am::sum(put({0, 3}), {0}).to_host().to_vector<float>() == std::vector<float>{0, 0, 0});
  auto mean = am::mean(put({0, 3}), {0}).to_host().to_vector<float>();
  REQUIRE(mean.size() == 3);
  CHECK(std::isnan(mean[0]));
}
