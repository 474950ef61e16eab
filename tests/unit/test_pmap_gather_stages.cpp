// pmap's all_gather over its own axis as a collective stage (parallel/detail/staged_pmap.hpp,
// devices/collectives/stage_gather.hpp): one buffer every device shares, the same values bit for
// bit as the one-plan path for stacked and tiled gathers along every axis, dtypes, in_axes and
// out_axes, gathers between reductions, and gathers kept in the plan where they are small.
#include "grad_test_support.hpp"
#include "stage_test_support.hpp"

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
