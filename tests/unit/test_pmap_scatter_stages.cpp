// pmap's psum_scatter over its own axis along dimension 0 as a collective stage (parallel/detail/
// staged_pmap.hpp, devices/collectives/stage_scatter.hpp): the sum in one buffer whose blocks are
// the devices' results (views, no copies), the same values bit for bit as the one-plan path for
// tiled and untiled scatters, both float dtypes, in_axes and out_axes 1, mixed with other stages,
// and scatters that stay in the plan (small, along another dimension, integers).
#include "grad_test_support.hpp"
#include "stage_test_support.hpp"

#include "devices/collectives/stage_gather.hpp"
#include "devices/collectives/stage_scatter.hpp"

using namespace am;
using namespace am::testing;
using namespace grad_test;
using namespace stage_test;

TEST_CASE("a pmap psum_scatter over 8 devices gives each device its block of one summed buffer",
          "[pmap][stages][scatter]") {
  runtime rt(eight_cpus());
  auto h = sample({8, 16, 1100}, 5).astype(dtype::float32); // 70 KB a device: a stage
  auto x = device_put(h, eight());
  auto r = pmap([](const array& a) { return psum_scatter(a, "i", 0, true); }, "i")(x);
  CHECK(r.shape() == shape_t{8, 2, 1100});
  CHECK(shards_in_one_buffer(r, true));
  // Device d's block: rows 2d and 2d + 1 of the sum over the devices, in device order.
  auto v = h.to_vector<float>();
  auto got = r.to_host().to_vector<float>();
  const std::size_t slice = 16 * 1100;
  bool same = got.size() == slice;
  for (std::size_t j = 0; same && j < slice; ++j) {
    float acc = v[j];
    for (std::size_t d = 1; d < 8; ++d)
      acc += v[d * slice + j];
    same = got[j] == acc;
  }
  CHECK(same);
  // Small ones, along another dimension, and of integers stay inside the plan.
  auto small = pmap([](const array& a) { return psum_scatter(a, "i", 0, true); }, "i")(
    device_put(sample({8, 16, 3}, 6), eight()));
  CHECK(!shards_in_one_buffer(small, true));
  auto other = pmap([](const array& a) { return psum_scatter(a, "i", 1, true); }, "i")(
    device_put(sample({8, 1100, 16}, 6).astype(dtype::float32), eight()));
  CHECK(!shards_in_one_buffer(other, true));
}

TEST_CASE("staged psum_scatters give the one-plan path's values bit for bit", "[pmap][stages][scatter]") {
  runtime rt(eight_cpus());
  for (auto type : {dtype::float32, dtype::float64}) {
    INFO(static_cast<int>(type));
    auto tiled = device_put(sample({8, 16, 1100}, 7).astype(type), eight());
    check_same_as_one_plan([](const array& a) { return psum_scatter(a, "i", 0, true); }, tiled);
    check_same_as_one_plan([](const array& a) { return psum_scatter(exp(a), "i", 0, true) * 3.0; }, tiled);
    check_same_as_one_plan([](const array& a) { return all_gather(psum_scatter(a, "i", 0, true), "i", 0, true) - a; },
                           tiled);
    check_same_as_one_plan([](const array& a) { return psum_scatter(a * pmean(a, "i"), "i", 0, true); }, tiled);
    auto stacked = device_put(sample({8, 8, 2100}, 9).astype(type), eight());
    check_same_as_one_plan([](const array& a) { return psum_scatter(a, "i"); }, stacked);
    check_same_as_one_plan([](const array& a) { return sum(psum_scatter(tanh(a), "i")); }, stacked);
  }
}

TEST_CASE("staged psum_scatters with in_axes and out_axes 1", "[pmap][stages][scatter]") {
  runtime rt(eight_cpus());
  auto x = device_put(sample({16, 8, 1100}, 29), eight()[0]); // mapped along dim 1
  auto f = pmap([](const array& a) { return psum_scatter(a, "i", 0, true) + 1.0; }, "i", {1}, {1});
  auto staged = f(x);
  auto plain = one_plan([&] { return f(x); });
  CHECK(staged.shape() == shape_t{2, 8, 1100});
  CHECK(bits(staged) == bits(plain));
}

TEST_CASE("which device lists a gather or a scatter stage can span", "[pmap][stages][scatter]") {
  using detail::stage_gathers;
  using detail::stage_scatters;
  CHECK(stage_gathers({0, 0, 0}));
  CHECK(stage_gathers({0, 1, 0, 1})); // placed back in axis order after the engine's gather
  CHECK(!stage_gathers({0, 0, 1}));   // the engine's blocks are equal
  CHECK(!stage_gathers({}));
  CHECK(stage_scatters({0, 0, 1, 1}));
  CHECK(!stage_scatters({0, 1, 0, 1})); // rank r receives the r-th block: runs in process order
  CHECK(!stage_scatters({1, 1, 0, 0}));
  CHECK(!stage_scatters({0, 0, 0, 1}));
}
