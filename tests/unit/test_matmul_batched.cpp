// Batched and transposed matrix products: the dot instruction's batched form and transpose flags on
// a CPU device for every dtype (BLAS for float32/float64, the hand-written kernel for the rest),
// and jnp.matmul / jnp.dot on arrays (batch dims broadcast, 1-D operands, a shared 2-D y, sharded
// over 8 devices, under jit and grad), each against a naive loop; and JAX's errors.
#include "cpu_test_support.hpp"
#include "support/arrays.hpp"
#include "support/dot_cases.hpp"

#include "actormesh/parallel/parallel.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <sstream>
#include <thread>
#include <string>

using namespace am;
using namespace am::testing;
using cpu_test::run_on;
using cpu_test::small_runtime;

namespace {

/// Element (b, i, j) of an operand [batch?, rows, cols] stored transposed or not.
double at(const std::vector<double>& v, bool transposed, std::int64_t b, std::int64_t i, std::int64_t j,
          std::int64_t rows, std::int64_t cols) {
  auto off = b * rows * cols;
  return transposed ? v[static_cast<std::size_t>(off + j * rows + i)] : v[static_cast<std::size_t>(off + i * cols + j)];
}

/// The naive product of the instruction's operands (x [B,m,k] or [B,k,m], y [B?,k,n] or [B?,n,k]).
std::vector<double> naive(const std::vector<double>& x, const std::vector<double>& y, std::int64_t batch,
                          std::int64_t m, std::int64_t k, std::int64_t n, bool y_batched, bool tx, bool ty) {
  std::vector<double> out;
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (std::int64_t q = 0; q < k; ++q)
          acc += at(x, tx, b, i, q, m, k) * at(y, ty, y_batched ? b : 0, q, j, k, n);
        out.push_back(acc);
      }
  return out;
}

std::vector<std::byte> encode(const std::vector<double>& v, dtype t) {
  auto h = host_array::from_vector(v).astype(t);
  auto b = h.bytes();
  return {b.begin(), b.end()};
}

std::vector<double> decode(const std::vector<std::byte>& bytes, dtype t, std::int64_t n) {
  return host_array::from_bytes(bytes, t, {n}).astype(dtype::float64).to_vector<double>();
}

void check_instruction(const device& d, dtype t, std::int64_t batch, std::int64_t m, std::int64_t k, std::int64_t n,
                       bool y_batched, bool tx, bool ty) {
  auto c = make_dot_case(t, batch, m, k, n, y_batched, tx, ty);
  auto& x = c.x;
  auto& y = c.y;
  auto& p = c.p;
  auto b = std::max<std::int64_t>(batch, 1);
  auto got = decode(run_on(d, p, {encode(x, t), encode(y, t)})[0], t, b * m * n);
  INFO(name(t) << " batch " << batch << " " << m << "x" << k << "x" << n << (y_batched ? " y batched" : "")
               << (tx ? " x transposed" : "") << (ty ? " y transposed" : ""));
  CHECK(got == naive(x, y, b, m, k, n, y_batched, tx, ty));
}

array put(const std::vector<double>& v, const shape_t& s, dtype t, const sharding_ptr& where) {
  return device_put(host_array::from_vector(v, s).astype(t), where);
}

/// True when a line of a lowered listing is a dot with these transpose flags.
bool has_dot_with(const std::string& listing, const std::string& flags) {
  std::istringstream lines(listing);
  for (std::string line; std::getline(lines, line);)
    if (line.find("= dot ") != std::string::npos && line.find(flags) != std::string::npos)
      return true;
  return false;
}

} // namespace

TEST_CASE("dot instructions: batched, shared y and transpose flags on every dtype", "[cpu][dot]") {
  runtime rt(small_runtime(1));
  auto d = devices(platform::cpu)[0];
  for (auto t : {dtype::float32, dtype::float64, dtype::int32, dtype::int64, dtype::uint8, dtype::float16,
                 dtype::bfloat16}) {
    for (int flags = 0; flags < 4; ++flags) {
      bool tx = flags & 1, ty = flags & 2;
      check_instruction(d, t, 0, 5, 7, 3, false, tx, ty); // 2-D
      check_instruction(d, t, 3, 5, 7, 3, true, tx, ty);
      check_instruction(d, t, 4, 1, 9, 13, false, tx, ty); // one y shared by every batch row
      check_instruction(d, t, 2, 17, 1, 6, true, tx, ty);
    }
    check_instruction(d, t, 3, 0, 4, 2, true, false, false); // empty products
    check_instruction(d, t, 2, 3, 0, 2, true, false, false); // k == 0: zeros
  }
}

TEST_CASE("program validation refuses malformed dot instructions", "[cpu][dot]") {
  program_builder pb("bad");
  auto x = pb.parameter({dtype::float32, {2, 3, 4}});
  auto y = pb.parameter({dtype::float32, {3, 4, 5}});
  pb.output(pb.dot(x, y)); // batch 2 against 3
  CHECK_THROWS_WITH(pb.build(), Catch::Contains("dot needs"));
  program_builder pb2("bad");
  auto a = pb2.parameter({dtype::float32, {4, 3}});
  CHECK_THROWS_WITH(pb2.dot(a, pb2.parameter({dtype::float32, {2, 4, 3}})), Catch::Contains("3-D x"));
}

TEST_CASE("matmul with batch dims, broadcasting and 1-D operands", "[array][matmul]") {
  runtime rt(eight_cpus());
  auto one = make_single_device_sharding(devices()[0]);
  struct shapes {
    shape_t x, y, out;
  };
  std::vector<shapes> cases{
    {{3, 5, 7}, {3, 7, 2}, {3, 5, 2}},       {{3, 5, 7}, {7, 4}, {3, 5, 4}},
    {{2, 1, 3, 4}, {5, 4, 6}, {2, 5, 3, 6}}, {{1, 3, 4}, {6, 4, 2}, {6, 3, 2}},
    {{7}, {7, 3}, {3}},                      {{4, 7}, {7}, {4}},
    {{7}, {7}, {}},                          {{2, 3, 7}, {7}, {2, 3}},
    {{7}, {2, 7, 3}, {2, 3}},                {{5, 7}, {2, 7, 3}, {2, 5, 3}},
  };
  for (auto t : {dtype::float32, dtype::float64, dtype::int32}) {
    for (auto& c : cases) {
      auto xh = host_array::from_vector(small_integers(element_count(c.x), 1), c.x);
      auto yh = host_array::from_vector(small_integers(element_count(c.y), 2), c.y);
      auto r = matmul(device_put(xh.astype(t), one), device_put(yh.astype(t), one));
      INFO(name(t) << " " << xh.ndim() << "-D @ " << yh.ndim() << "-D");
      REQUIRE(r.shape() == c.out);
      CHECK(r.dtype() == t);
      // The naive reference: numpy's broadcasting done by hand on host arrays.
      auto xr = c.x.size() == 1 ? xh.reshape({1, c.x[0]}) : xh;
      auto yr = c.y.size() == 1 ? yh.reshape({c.y[0], 1}) : yh;
      shape_t bx(xr.shape().begin(), xr.shape().end() - 2), by(yr.shape().begin(), yr.shape().end() - 2);
      auto batch = host_array::broadcast_shapes(bx, by);
      auto m = xr.shape()[xr.shape().size() - 2], k = xr.shape().back(), n = yr.shape().back();
      auto full_x = batch, full_y = batch;
      full_x.insert(full_x.end(), {m, k});
      full_y.insert(full_y.end(), {k, n});
      auto B = element_count(batch);
      auto xv = xr.broadcast_to(full_x).astype(dtype::float64).to_vector<double>();
      auto yv = yr.broadcast_to(full_y).astype(dtype::float64).to_vector<double>();
      CHECK(values(r) == naive(xv, yv, B, m, k, n, true, false, false));
    }
  }
}

TEST_CASE("jnp.dot of N-D operands sums x's last dim with y's second-to-last", "[array][matmul]") {
  runtime rt(eight_cpus());
  auto one = make_single_device_sharding(devices()[0]);
  auto xh = host_array::from_vector(small_integers(2 * 3 * 4, 1), {2, 3, 4});
  auto yh = host_array::from_vector(small_integers(5 * 4 * 6, 2), {5, 4, 6});
  auto r = dot(device_put(xh, one), device_put(yh, one));
  REQUIRE(r.shape() == shape_t{2, 3, 5, 6});
  auto xv = xh.to_vector<double>(), yv = yh.to_vector<double>();
  std::vector<double> want;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 5; ++c)
        for (int e = 0; e < 6; ++e) {
          double acc = 0;
          for (int q = 0; q < 4; ++q)
            acc += xv[static_cast<std::size_t>((a * 3 + b) * 4 + q)] * yv[static_cast<std::size_t>((c * 4 + q) * 6 + e)];
          want.push_back(acc);
        }
  CHECK(values(r) == want);
  auto v = device_put(host_array::from_vector(std::vector<double>{1, 2, 3, 4}), one);
  CHECK(values(dot(v, v)) == std::vector<double>{30});
  CHECK(values(dot(device_put(xh, one), v)).size() == 6);
  CHECK(dot(v, device_put(yh, one)).shape() == shape_t{5, 6});
}

TEST_CASE("batched matmul sharded over 8 devices and under jit matches the naive loop", "[array][matmul]") {
  runtime rt(eight_cpus());
  std::int64_t B = 8, m = 5, k = 4, n = 6;
  auto x = small_integers(B * m * k, 1), y = small_integers(B * k * n, 2), shared = small_integers(k * n, 3);
  auto want = naive(x, y, B, m, k, n, true, false, false);
  auto want_shared = naive(x, shared, B, m, k, n, false, false, false);
  for (auto t : {dtype::float32, dtype::float64, dtype::int32}) {
    INFO(name(t));
    auto xa = put(x, {B, m, k}, t, on_4x2(P("x")));
    auto ya = put(y, {B, k, n}, t, on_4x2(P("x", none, "y")));
    auto r = matmul(xa, ya);
    CHECK(values(r) == want);
    auto ys = put(shared, {k, n}, t, on_4x2(P()));
    CHECK(values(matmul(xa, ys)) == want_shared);
    auto f = jit([](const array& a, const array& b) { return matmul(a, b) * 1; }, "batched");
    CHECK(values(f(xa, ya)) == want);
    CHECK(values(matmul(put(x, {B, m, k}, t, on_4x2(P(none, none, "y"))), ys)) == want_shared);
  }
}

TEST_CASE("grad of a batched matmul", "[grad][matmul]") {
  runtime rt(eight_cpus());
  std::int64_t B = 4, m = 3, k = 5, n = 2;
  auto x = small_integers(B * m * k, 1), y = small_integers(B * k * n, 2);
  auto xa = put(x, {B, m, k}, dtype::float64, on_4x2(P("x")));
  auto ya = put(y, {B, k, n}, dtype::float64, on_4x2(P("x")));
  auto gx = grad([&](const array& a) { return sum(matmul(a, ya)); })(xa);
  auto gy = grad([&](const array& b) { return sum(matmul(xa, b)); })(ya);
  // d/dx[b,i,q] = sum_j y[b,q,j]; d/dy[b,q,j] = sum_i x[b,i,q].
  std::vector<double> wx, wy;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t q = 0; q < k; ++q) {
        double s = 0;
        for (std::int64_t j = 0; j < n; ++j)
          s += y[static_cast<std::size_t>((b * k + q) * n + j)];
        wx.push_back(s);
      }
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t q = 0; q < k; ++q)
      for (std::int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (std::int64_t i = 0; i < m; ++i)
          s += x[static_cast<std::size_t>((b * m + i) * k + q)];
        wy.push_back(s);
      }
  CHECK(values(gx) == wx);
  CHECK(values(gy) == wy);
}

TEST_CASE("matmul and dot refuse what JAX refuses, with JAX's words", "[array][matmul]") {
  runtime rt(eight_cpus());
  auto one = make_single_device_sharding(devices()[0]);
  auto ones = [&](shape_t s) { return device_put(host_array::ones(s, dtype::float32), one); };
  CHECK_THROWS_AS(matmul(ones({2, 3, 4}), ones({2, 5, 6})), type_error);
  CHECK_THROWS_WITH(matmul(ones({2, 3, 4}), ones({2, 5, 6})),
                    "dot_general requires contracting dimensions to have the same shape, got (4,) and (5,).");
  CHECK_THROWS_WITH(matmul(ones({3}), ones({4})),
                    "dot_general requires contracting dimensions to have the same shape, got (3,) and (4,).");
  CHECK_THROWS_WITH(matmul(ones({3, 4}), ones({3})),
                    "dot_general requires contracting dimensions to have the same shape, got (4,) and (3,).");
  CHECK_THROWS_WITH(dot(ones({3, 4}), ones({5, 6})),
                    "dot_general requires contracting dimensions to have the same shape, got (4,) and (5,).");
  CHECK_THROWS_WITH(matmul(ones({2, 3, 4}), ones({3, 4, 6})),
                    "Incompatible types for matmul arguments: float32[2,3,4] and float32[3,4,6]");
  CHECK_THROWS_WITH(matmul(ones({}), ones({3, 4})), "matmul input operand 0 must have ndim at least 1, but it has ndim 0");
}

TEST_CASE("transposed operands of a jitted matmul fold into the BLAS call's flags", "[array][matmul][jit]") {
  runtime rt(eight_cpus());
  std::int64_t m = 5, k = 8, n = 4, B = 4;
  auto a = small_integers(k * m, 1), b = small_integers(n * k, 2), c = small_integers(B * k * m, 3);
  for (auto t : {dtype::float32, dtype::float64}) {
    INFO(name(t));
    auto xa = put(a, {k, m}, t, on_4x2(P("x")));       // x stored [k, m]
    auto yb = put(b, {n, k}, t, on_4x2(P(none, "y"))); // y stored [n, k]
    auto both = jit([](const array& p, const array& q) { return matmul(transpose(p), transpose(q)); }, "tt");
    CHECK(values(both(xa, yb)) == naive(a, b, 1, m, k, n, false, true, true));
    CHECK(has_dot_with(both.lowered_text(xa, yb), "{1,1}")); // both transposes are flags
    auto batched = jit([](const array& p, const array& q) { return matmul(transpose(p, {0, 2, 1}), q); }, "bt");
    auto xc = put(c, {B, k, m}, t, on_4x2(P("x")));
    auto yk = put(small_integers(k * n, 4), {k, n}, t, on_4x2(P()));
    CHECK(values(batched(xc, yk)) == naive(c, small_integers(k * n, 4), B, m, k, n, false, true, false));
    CHECK(has_dot_with(batched.lowered_text(xc, yk), "{1,0}"));
  }
  // Integers keep the copies (the hand-written kernel has no flags), with the same values.
  auto xi = put(a, {k, m}, dtype::int32, on_4x2(P("x")));
  auto yi = put(b, {n, k}, dtype::int32, on_4x2(P()));
  auto f = jit([](const array& p, const array& q) { return matmul(transpose(p), transpose(q)); }, "ints");
  CHECK(values(f(xi, yi)) == naive(a, b, 1, m, k, n, false, true, true));
}

TEST_CASE("matmuls from many threads on many devices take turns at the BLAS and stay right", "[array][matmul][threads]") {
  runtime rt(eight_cpus());
  std::int64_t B = 3, m = 17, k = 9, n = 13;
  auto x = small_integers(B * m * k, 1), y = small_integers(B * k * n, 2);
  auto want = naive(x, y, B, m, k, n, true, false, false);
  constexpr int threads = 6, rounds = 15;
  std::atomic<int> wrong{0}, done{0};
  std::vector<std::thread> pool;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      auto d = devices()[static_cast<std::size_t>(t) % devices().size()];
      auto type = t % 2 ? dtype::float64 : dtype::float32;
      auto xa = put(x, {B, m, k}, type, make_single_device_sharding(d));
      auto ya = put(y, {B, k, n}, type, make_single_device_sharding(d));
      for (int r = 0; r < rounds && std::chrono::steady_clock::now() < deadline; ++r) {
        if (values(matmul(xa, ya)) != want)
          ++wrong;
        ++done;
      }
    });
  for (auto& th : pool)
    th.join();
  CHECK(wrong == 0);
  CHECK(done == threads * rounds);
}
