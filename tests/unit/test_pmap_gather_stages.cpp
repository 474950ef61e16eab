// pmap's all_gather over its own axis as a collective stage (parallel/detail/staged_pmap.hpp,
// devices/collectives/stage_gather.hpp): one buffer every device shares, the same values bit for
// bit as the one-plan path for stacked and tiled gathers along every axis, dtypes, in_axes and
// out_axes, gathers between reductions, and gathers kept in the plan where they are small; ppermute
// as a stage (devices/collectives/stage_permute.hpp: each device its source's slice, or zeros;
// across processes only the slices that cross, in one all-to-all).
#include "grad_test_support.hpp"
#include "stage_test_support.hpp"

#include "devices/collectives/stage_permute.hpp"

#include <algorithm>

using namespace am;
using namespace am::testing;
using namespace grad_test;
using namespace stage_test;

TEST_CASE("a pmap all_gather over 8 devices is one buffer every device shares, the slices in device order",
          "[pmap][stages][gather]") {
  runtime rt(eight_cpus());
  auto h = sample({8, 2500}, 3).astype(dtype::float32); // 80 KB gathered a device: a stage
  auto x = device_put(h, eight());
  for (bool tiled : {false, true}) {
    INFO(tiled);
    auto r = pmap([tiled](const array& a) { return all_gather(a, "i", 0, tiled); }, "i", {0}, {none})(x);
    CHECK(r.shape() == (tiled ? shape_t{20000} : shape_t{8, 2500}));
    CHECK(shards_in_one_buffer(r, false));
    CHECK(r.to_host().to_vector<float>() == h.to_vector<float>());
  }
  // Small gathers stay inside the plan: one copy per device.
  auto small = pmap([](const array& a) { return all_gather(a, "i"); }, "i", {0}, {none})(
    device_put(sample({8, 10}, 4), eight()));
  CHECK(!shards_in_one_buffer(small, false));
}

TEST_CASE("staged gathers give the one-plan path's values bit for bit", "[pmap][stages][gather]") {
  runtime rt(eight_cpus());
  for (auto type : {dtype::float32, dtype::float64, dtype::int32, dtype::float16}) {
    INFO(static_cast<int>(type));
    auto x = device_put(sample({8, 6, 1500}, 17).astype(type), eight()); // 8 x 9000 elements gathered
    check_same_as_one_plan([](const array& a) { return all_gather(a, "i"); }, x);
    check_same_as_one_plan([](const array& a) { return all_gather(a, "i", 0, true) * 2.0; }, x);
    check_same_as_one_plan([](const array& a) { return all_gather(a, "i", 1); }, x);
    check_same_as_one_plan([](const array& a) { return all_gather(a, "i", 1, true); }, x);
    check_same_as_one_plan([](const array& a) { return sum(all_gather(a, "i", 2), {2}) - a; }, x);
    check_same_as_one_plan([](const array& a) { return sum(all_gather(a, "i"), {0}) + sum(all_gather(a, "i", 1), {1}); },
                           x);
  }
  auto f = device_put(sample({8, 6, 1500}, 19), eight());
  check_same_as_one_plan([](const array& a) { return all_gather(psum(a, "i") * a, "i", 1, true); }, f);
  check_same_as_one_plan([](const array& a) { return pmean(all_gather(exp(a), "i"), "i") + psum(a, "i"); }, f);
}

TEST_CASE("staged gathers with in_axes and out_axes 1", "[pmap][stages][gather]") {
  runtime rt(eight_cpus());
  auto x = device_put(sample({6, 8, 1500}, 23), eight()[0]); // mapped along dim 1
  auto g = pmap([](const array& a) { return std::make_tuple(all_gather(a, "i", 1, true), all_gather(a, "i") * a); },
                "i", {1}, {none, 1});
  auto [staged_t, staged_s] = g(x);
  auto [plain_t, plain_s] = one_plan([&] { return g(x); });
  CHECK(staged_t.shape() == shape_t{6, 12000});
  CHECK(bits(staged_t) == bits(plain_t));
  CHECK(staged_s.shape() == shape_t{8, 8, 6, 1500});
  CHECK(bits(staged_s) == bits(plain_s));
}

TEST_CASE("staged ppermutes give the one-plan path's values bit for bit, zeros where no slice arrives",
          "[pmap][stages][gather][ppermute]") {
  runtime rt(eight_cpus());
  std::vector<std::pair<int, int>> ring, partial{{0, 3}, {5, 0}, {3, 5}}, swaps;
  for (int i = 0; i < 8; ++i) {
    ring.emplace_back(i, (i + 1) % 8);
    swaps.emplace_back(i, i ^ 1);
  }
  for (auto type : {dtype::float32, dtype::float64, dtype::int32}) {
    INFO(static_cast<int>(type));
    auto x = device_put(sample({8, 6, 3000}, 31).astype(type), eight()); // 72 KB or more a device: a stage
    for (auto* perm : {&ring, &partial, &swaps}) {
      auto p = *perm;
      check_same_as_one_plan([p](const array& a) { return ppermute(a, "i", p); }, x);
      check_same_as_one_plan([p](const array& a) { return ppermute(a * 2.0, "i", p) - psum(a, "i"); }, x);
    }
  }
  // The values themselves: device 3 gets device 0's slice, device 1 gets zeros.
  auto h = sample({8, 6, 3000}, 37);
  auto r = pmap([partial](const array& a) { return ppermute(a, "i", partial); }, "i")(device_put(h, eight()));
  auto got = r.to_host().to_vector<double>();
  auto v = h.to_vector<double>();
  const std::size_t slice = 6 * 3000;
  CHECK(std::equal(v.begin(), v.begin() + slice, got.begin() + 3 * slice));
  CHECK(std::all_of(got.begin() + slice, got.begin() + 2 * slice, [](double e) { return e == 0.0; }));
  // Where no slice arrives, the stage's zeros are the same buffer on every such device.
  auto shards = r.addressable_shards();
  CHECK(shards[1].data.get()->data() == shards[2].data.get()->data());
  CHECK(shards[3].data.get()->data() != shards[0].data.get()->data());
  // A slice from another local device is viewed where it is: device 3's result is device 0's input.
  auto x = device_put(h, eight());
  auto viewed = pmap([partial](const array& a) { return ppermute(a, "i", partial); }, "i")(x);
  CHECK(viewed.addressable_shards()[3].data.get()->data() == x.addressable_shards()[0].data.get()->data());
  CHECK(viewed.addressable_shards()[3].data.get()->device_id() == viewed.addressable_shards()[3].device.id);
}

TEST_CASE("staged ppermutes with in_axes and out_axes 1", "[pmap][stages][gather][ppermute]") {
  runtime rt(eight_cpus());
  std::vector<std::pair<int, int>> ring;
  for (int i = 0; i < 8; ++i)
    ring.emplace_back(i, (i + 3) % 8);
  auto x = device_put(sample({6, 8, 3000}, 41), eight()[0]); // mapped along dim 1
  auto f = pmap([ring](const array& a) { return ppermute(a, "i", ring) * a; }, "i", {1}, {1});
  auto staged = f(x);
  auto plain = one_plan([&] { return f(x); });
  CHECK(staged.shape() == shape_t{6, 8, 3000});
  CHECK(bits(staged) == bits(plain));
}

TEST_CASE("a ppermute across processes sends each process only the slices its devices receive",
          "[pmap][stages][ppermute]") {
  using detail::plan_exchange;
  using moves = std::vector<std::vector<std::vector<int>>>;
  // A ring over 3 devices of process 0 and 1 of process 1 (sources: per position, where from):
  // only slice 2 goes to process 1 and slice 3 to process 0, one slot a block.
  auto ring = plan_exchange({0, 0, 0, 1}, {3, 0, 1, 2});
  CHECK(ring.slots == 1);
  CHECK(ring.moves == moves{{{}, {2}}, {{3}, {}}});
  // Swaps over alternating processes: every slice crosses, in the order of the receiving positions.
  auto swaps = plan_exchange({0, 1, 0, 1}, {1, 0, 3, 2});
  CHECK(swaps.slots == 2);
  CHECK(swaps.moves == moves{{{}, {0, 2}}, {{1, 3}, {}}});
  // One slice one way: the other way's block is padding only.
  auto one_way = plan_exchange({0, 0, 1, 1}, {-1, -1, -1, 0});
  CHECK(one_way.slots == 1);
  CHECK(one_way.moves == moves{{{}, {0}}, {{}, {}}});
  // Swaps within each process: nothing crosses, no collective.
  CHECK(plan_exchange({0, 0, 1, 1}, {1, 0, 3, 2}).slots == 0);
  CHECK(plan_exchange({0, 0, 0}, {1, 2, 0}).slots == 0);
  // Three processes, process numbers that are not their ranks.
  auto three = plan_exchange({4, 7, 9, 4}, {1, 2, 3, 0});
  CHECK(three.slots == 1);
  CHECK(three.moves == moves{{{}, {}, {3}}, {{1}, {}, {}}, {{}, {2}, {}}});
  CHECK_THROWS_AS(plan_exchange({0, 1}, {0}), runtime_error);
}
