// An array's identity and its shards as JAX shows them: am::is_same (Python's `is`), shard.to_host()
// (one block copied), and addressable_shards() in the sharding's device order rather than by id.
#include "support/cpu_options.hpp"

#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <vector>

TEST_CASE("arrays: is_same is true for copies of one handle and false for any result", "[unit][array_identity]") {
  am::runtime rt(am::test::cpu_options(2));
  am::mesh m({2}, am::devices(), {"x"});
  auto sharding = am::make_named_sharding(m, am::P("x"));
  auto x = am::device_put(am::host_array::arange(4, am::dtype::float32), sharding);
  auto copy = x;
  CHECK(am::is_same(x, copy));
  CHECK(am::is_same(am::device_put(x, x.sharding()), x)); // JAX: device_put(x, x.sharding) is x
  CHECK_FALSE(am::is_same(x + 0.0f, x));
  CHECK_FALSE(am::is_same(am::device_put(am::host_array::arange(4, am::dtype::float32), sharding), x));
  CHECK(am::is_same(am::array(), am::array()));
  CHECK_FALSE(am::is_same(am::array(), x));
  copy.delete_();
  CHECK(x.is_deleted()); // the same array
}

TEST_CASE("arrays: a shard's to_host copies its block, and addressable_shards follow the mesh's order",
          "[unit][array_identity]") {
  am::runtime rt(am::test::cpu_options(4));
  auto d = am::devices();
  am::mesh m({4}, {d[2], d[0], d[3], d[1]}, {"x"});
  auto x = am::device_put(am::host_array::arange(8, am::dtype::int32), am::make_named_sharding(m, am::P("x")));
  auto shards = x.addressable_shards();
  REQUIRE(shards.size() == 4);
  std::vector<int> ids;
  for (auto& s : shards)
    ids.push_back(s.device.id);
  CHECK(ids == std::vector<int>{2, 0, 3, 1}); // the mesh's order, as JAX lists them
  for (std::size_t k = 0; k < shards.size(); ++k) {
    CAPTURE(k);
    CHECK(shards[k].index[0].start == static_cast<std::int64_t>(2 * k)); // block k on the k-th mesh device
    auto block = shards[k].to_host();
    CHECK(block.dtype() == am::dtype::int32);
    CHECK(block.shape() == am::shape_t{2});
    CHECK(block.to_vector<std::int32_t>() == std::vector<std::int32_t>{static_cast<std::int32_t>(2 * k),
                                                                       static_cast<std::int32_t>(2 * k + 1)});
  }
  x.delete_();
  CHECK_THROWS_WITH(x.addressable_shards(), Catch::Contains("Array has been deleted"));
}
