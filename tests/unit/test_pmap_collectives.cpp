// Collectives inside pmap over 4 of 8 CPU devices, against JAX's results for the same inputs
// (tests/data/pmap_jax_reference.txt, written by tests/data/pmap_jax_reference.py).
#include "grad_test_support.hpp"

using namespace am;
using namespace am::testing;
using namespace grad_test;

namespace {

/// [[1, 2], [3, 4], [5, 6], [7, 8]] as the reference script's y.
host_array y_data() { return host_array::arange(1.0, 9.0, 1.0, dtype::float64).reshape({4, 2}); }

std::vector<double> seq(double from, double to) {
  std::vector<double> v;
  for (double x = from; x <= to; x += 1)
    v.push_back(x);
  return v;
}

std::vector<double> repeat(const std::vector<double>& v, int times) {
  std::vector<double> out;
  for (int k = 0; k < times; ++k)
    out.insert(out.end(), v.begin(), v.end());
  return out;
}

} // namespace

TEST_CASE("psum, pmean, pmax and pmin give every device the reduction", "[pmap][collectives]") {
  runtime rt(eight_cpus());
  auto y = y_data();
  auto run = [&](auto f) { return values(pmap(f, "i")(device_put(y, on_4x2(P())))); };
  CHECK(run([](const array& a) { return psum(a, "i"); }) == repeat({16, 20}, 4));
  CHECK(run([](const array& a) { return a - psum(a, "i"); })
        == std::vector<double>{-15, -18, -13, -16, -11, -14, -9, -12});
  CHECK(run([](const array& a) { return pmean(a, "i"); }) == repeat({4, 5}, 4));
  CHECK(run([](const array& a) { return pmax(a, "i"); }) == repeat({7, 8}, 4));
  CHECK(run([](const array& a) { return pmin(a, "i"); }) == repeat({1, 2}, 4));
  // REFERENCE.md: x - psum(x) == x - x.sum(0).
  auto x = device_put(sample({4, 3}, 40), on_4x2(P()));
  CHECK(all_close(values(pmap([](const array& a) { return a - psum(a, "i"); }, "i")(x)), values(x - sum(x, {0})),
                  1e-12, 1e-12));
}

TEST_CASE("axis_index and axis_size", "[pmap][collectives]") {
  runtime rt(eight_cpus());
  auto y = device_put(y_data(), on_4x2(P()));
  auto idx = pmap([](const array&) { return axis_index("i"); }, "i")(y);
  CHECK(idx.dtype() == dtype::int32);
  CHECK(values(idx) == std::vector<double>{0, 1, 2, 3});
  auto scaled = pmap([](const array& a) { return a * static_cast<double>(axis_size("i")); }, "i")(y);
  CHECK(values(scaled) == std::vector<double>{4, 8, 12, 16, 20, 24, 28, 32});
}

TEST_CASE("all_gather stacked, tiled and along another axis", "[pmap][collectives]") {
  runtime rt(eight_cpus());
  auto y = device_put(y_data(), on_4x2(P()));
  auto stacked = pmap([](const array& a) { return all_gather(a, "i"); }, "i")(y);
  CHECK(stacked.shape() == shape_t{4, 4, 2});
  CHECK(values(stacked) == repeat(seq(1, 8), 4));
  auto tiled = pmap([](const array& a) { return all_gather(a, "i", 0, true); }, "i")(y);
  CHECK(tiled.shape() == shape_t{4, 8});
  CHECK(values(tiled) == repeat(seq(1, 8), 4));
  auto axis1 = pmap([](const array& a) { return all_gather(a, "i", 1); }, "i")(y);
  CHECK(axis1.shape() == shape_t{4, 2, 4});
  CHECK(values(axis1) == repeat({1, 3, 5, 7, 2, 4, 6, 8}, 4));
}

TEST_CASE("ppermute moves each device's value to its destination", "[pmap][collectives]") {
  runtime rt(eight_cpus());
  auto y = device_put(y_data(), on_4x2(P()));
  // REFERENCE.md: ppermute i -> i+1 == roll(x, 1, 0).
  auto shift = pmap([](const array& a) { return ppermute(a, "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}}); }, "i")(y);
  CHECK(values(shift) == std::vector<double>{7, 8, 1, 2, 3, 4, 5, 6});
  auto partial = pmap([](const array& a) { return ppermute(a, "i", {{0, 2}, {3, 1}}); }, "i")(y);
  CHECK(values(partial) == std::vector<double>{0, 0, 7, 8, 1, 2, 0, 0});
  CHECK_THROWS_WITH(pmap([](const array& a) { return ppermute(a, "i", {{0, 1}, {1, 1}}); }, "i")(y),
                    "ppermute sources and destinations must be unique, got ((0, 1), (1, 1)).");
}

TEST_CASE("psum_scatter gives each device its block of the sum", "[pmap][collectives]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P());
  auto z = device_put(host_array::arange(32, dtype::float64).reshape({4, 4, 2}), s);
  auto plain = pmap([](const array& a) { return psum_scatter(a, "i"); }, "i")(z);
  CHECK(plain.shape() == shape_t{4, 2});
  CHECK(values(plain) == std::vector<double>{48, 52, 56, 60, 64, 68, 72, 76});
  auto t = device_put(host_array::arange(32, dtype::float64).reshape({4, 8}), s);
  auto tiled = pmap([](const array& a) { return psum_scatter(a, "i", 0, true); }, "i")(t);
  CHECK(tiled.shape() == shape_t{4, 2});
  CHECK(values(tiled) == std::vector<double>{48, 52, 56, 60, 64, 68, 72, 76});
  auto d1 = device_put(host_array::arange(32, dtype::float64).reshape({4, 2, 4}), s);
  auto dim1 = pmap([](const array& a) { return psum_scatter(a, "i", 1); }, "i")(d1);
  CHECK(dim1.shape() == shape_t{4, 2});
  CHECK(values(dim1) == std::vector<double>{48, 64, 52, 68, 56, 72, 60, 76});
  auto y = device_put(y_data(), s);
  CHECK_THROWS_WITH(pmap([](const array& a) { return psum_scatter(a, "i"); }, "i")(y),
                    "reduce_scatter operand scatter dimension size 2 must match shard count 4");
  auto twelve = device_put(host_array::arange(12, dtype::float64).reshape({4, 3}), s);
  CHECK_THROWS_WITH(pmap([](const array& a) { return psum_scatter(a, "i", 0, true); }, "i")(twelve),
                    "tiled reduce_scatter operand scatter dimension size 3 must be divisible by shard_count 4");
}

TEST_CASE("gradients of collectives are collectives", "[pmap][collectives][grad]") {
  runtime rt(eight_cpus());
  auto y = device_put(y_data(), on_4x2(P()));
  auto run = [&](auto f) { return values(pmap(grad(f), "i")(y)); };
  CHECK(run([](const array& a) { return sum(psum(a, "i")); }) == repeat({4, 4}, 4));
  CHECK(run([](const array& a) { return sum(psum(a, "i") * a); }) == repeat({32, 40}, 4));
  CHECK(run([](const array& a) { return sum(square(pmean(a, "i"))); }) == repeat({8, 10}, 4));
  auto w = device_put(host_array::from_vector(std::vector<double>{0.0, 1.0}), on_4x2(P()));
  CHECK(values(pmap(grad([](const array& a, const array& c) {
                      return sum(ppermute(a, "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}}) * c);
                    }),
                    "i", {0, am::none})(y, w))
        == repeat({0, 1}, 4));
  CHECK(run([](const array& a) { return sum(square(all_gather(a, "i"))); })
        == std::vector<double>{8, 16, 24, 32, 40, 48, 56, 64});
  CHECK_THROWS_WITH(run([](const array& a) { return sum(pmax(a, "i")); }),
                    "Differentiation rule for 'pmax' not implemented");
}

TEST_CASE("collectives of a broadcast argument (the same on every device)", "[pmap][collectives]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P());
  auto y = device_put(y_data(), s);
  auto c = device_put(host_array::from_vector(std::vector<double>{10.0, 20.0}), s);
  auto c4 = device_put(host_array::from_vector(std::vector<double>{1.0, 2.0, 3.0, 4.0}), s);
  auto run = [&](auto f, const array& v) { return values(pmap(f, "i", {0, am::none})(y, v)); };
  CHECK(run([](const array&, const array& b) { return psum(b, "i"); }, c) == repeat({40, 80}, 4));
  CHECK(run([](const array&, const array& b) { return pmean(b, "i"); }, c) == repeat({10, 20}, 4));
  CHECK(run([](const array&, const array& b) { return pmax(b, "i"); }, c) == repeat({10, 20}, 4));
  CHECK(run([](const array&, const array& b) { return all_gather(b, "i"); }, c) == repeat({10, 20}, 16));
  CHECK(run([](const array&, const array& b) { return ppermute(b, "i", {{0, 2}}); }, c)
        == std::vector<double>{0, 0, 0, 0, 10, 20, 0, 0});
  CHECK(run([](const array&, const array& b) { return psum_scatter(b, "i"); }, c4) == std::vector<double>{4, 8, 12, 16});
}

TEST_CASE("psum and pmean of large slices: a reduce-scatter then an all-gather, the same sums", "[pmap][collectives]") {
  runtime rt(eight_cpus());
  auto devs = am::devices(platform::cpu);
  // 8 slices of 8 x 1024 floats (divisible by the device count: the two-stage path), and of
  // 8 x 1023 (not divisible: one reduction over dim 0).
  for (std::int64_t width : {1024, 1023}) {
    INFO("width " << width);
    auto h = host_array::arange(0.0, static_cast<double>(8 * 8 * width), 1.0, dtype::float32).reshape({8, 8, width});
    auto x = device_put(h, devs);
    auto summed = pmap([](const array& a) { return psum(a, "i"); }, "i", {0}, {am::none});
    auto averaged = pmap([](const array& a) { return a - pmean(a, "i"); }, "i");
    auto hv = h.astype(dtype::float64).to_vector<double>();
    auto slice = static_cast<std::size_t>(8 * width);
    std::vector<double> want(slice, 0.0);
    for (std::size_t d = 0; d < 8; ++d)
      for (std::size_t k = 0; k < slice; ++k)
        want[k] += hv[d * slice + k];
    CHECK(values(summed(x)) == want);
    std::vector<double> centered(hv.size());
    for (std::size_t k = 0; k < hv.size(); ++k)
      centered[k] = hv[k] - want[k % slice] / 8;
    CHECK(all_close(values(averaged(x)), centered, 1e-6, 1e-3));
    // Divisible: each device sums only its block of every slice (a stage of its own), then gathers.
    auto text = summed.lowered_text(x);
    if (width == 1024)
      CHECK_THAT(text, Catch::StartsWith("24 programs in 3 stage(s)"));
    else
      CHECK_THAT(text, Catch::StartsWith("16 programs in 2 stage(s)"));
  }
}
