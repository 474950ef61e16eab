// pmap's psum_scatter over its own axis as a collective stage (parallel/detail/staged_pmap.hpp,
// devices/collectives/stage_scatter.hpp): the sum in one buffer whose blocks are the devices'
// results (views, no copies), the same values bit for bit as the one-plan path for tiled and
// untiled scatters along every dimension, both float dtypes, in_axes and out_axes 1, mixed with
// other stages, and scatters that stay in the plan (small, integers); how the stages lay out the
// blocks of processes holding different numbers of positions (stage_positions.hpp).
#include "grad_test_support.hpp"
#include "stage_test_support.hpp"

#include "devices/collectives/stage_positions.hpp"

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
  // Small ones and those of integers stay inside the plan.
  auto small = pmap([](const array& a) { return psum_scatter(a, "i", 0, true); }, "i")(
    device_put(sample({8, 16, 3}, 6), eight()));
  CHECK(!shards_in_one_buffer(small, true));
  auto ints = pmap([](const array& a) { return psum_scatter(a, "i", 0, true); }, "i")(
    device_put(sample({8, 16, 1100}, 6).astype(dtype::int32), eight()));
  CHECK(!shards_in_one_buffer(ints, true));
  // Along another dimension, untiled, the blocks are views of one buffer too (the stage ran on
  // the slices with that dimension moved first); tiled, each block is then moved back.
  auto other = pmap([](const array& a) { return psum_scatter(a, "i", 1); }, "i")(
    device_put(sample({8, 2100, 8}, 6).astype(dtype::float32), eight()));
  CHECK(other.shape() == shape_t{8, 2100});
  CHECK(shards_in_one_buffer(other, true));
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
    // Along dimensions 1 and 2, tiled and not.
    auto wide = device_put(sample({8, 5, 16, 232}, 8).astype(type), eight()); // 72 KB or more a device
    check_same_as_one_plan([](const array& a) { return psum_scatter(a, "i", 1, true); }, wide);
    check_same_as_one_plan([](const array& a) { return psum_scatter(a * 2.0, "i", 1, true) - 1.0; }, wide);
    check_same_as_one_plan([](const array& a) { return psum_scatter(a * pmax(a, "i"), "i", 2, true); }, wide);
    check_same_as_one_plan([](const array& a) { return psum_scatter(a, "i", -1, true); }, wide); // the last
    auto eights = device_put(sample({8, 9, 8, 260}, 10).astype(type), eight());
    check_same_as_one_plan([](const array& a) { return psum_scatter(a, "i", 1); }, eights);
    check_same_as_one_plan([](const array& a) { return psum_scatter(exp(a), "i", 2, true); }, device_put(
      sample({8, 9, 130, 16}, 12).astype(type), eight()));
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
  // Along dimension 1 of the slices, tiled: the result keeps pmap's layout, one slice a device.
  auto y = device_put(sample({16, 8, 1104}, 31), eight()[0]);
  auto g = pmap([](const array& a) { return psum_scatter(a, "i", 1, true) + 1.0; }, "i", {1}, {0});
  auto r = g(y);
  CHECK(r.shape() == shape_t{8, 16, 138});
  CHECK(r.addressable_shards().size() == 8);
  for (auto& sh : r.addressable_shards())
    CHECK(sh.index.at(0).stop - sh.index.at(0).start == 1);
  CHECK(bits(r) == bits(one_plan([&] { return g(y); })));
}

TEST_CASE("how stages across processes lay out the blocks of each process's positions", "[pmap][stages][scatter]") {
  using detail::positions_by_process;
  auto one = positions_by_process({0, 0, 0});
  CHECK(one.in_order);
  CHECK(one.slots == 3);
  CHECK(positions_by_process({0, 0, 1, 1}).in_order); // the engine's blocks are the axis's order
  auto alternating = positions_by_process({0, 1, 0, 1}); // placed back by position
  CHECK(!alternating.in_order);
  CHECK(alternating.slots == 2);
  CHECK(alternating.of.at(1) == std::vector<std::size_t>{1, 3});
  auto uneven = positions_by_process({0, 0, 0, 1}); // process 1's block padded to 3 slots
  CHECK(!uneven.in_order);
  CHECK(uneven.slots == 3);
  CHECK(uneven.rank_of(1) == 1);
  CHECK(uneven.rank_of(2) == -1);
  CHECK(!positions_by_process({1, 1, 0, 0}).in_order); // rank 0 is process 0, whose positions come last
  auto sparse = positions_by_process({3, 5, 5}); // ranks follow the sorted processes, not their numbers
  CHECK(sparse.rank_of(5) == 1);
  CHECK(!sparse.in_order);
}
