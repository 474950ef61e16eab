// Global arrays built from their blocks in one process: make_array_from_callback (the callback's
// blocks copied once, so the caller may change them at once) and the internal block writer that
// restore_checkpoint reads files through (each shard written in place, its errors on the array).
#include "sharding/detail/block_writer_array.hpp"
#include "support/arrays.hpp"

#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <vector>

using am::host_array;

namespace {

/// The rows [start, stop) of `whole` (a rank-2 block by its first dimension).
host_array rows_of(const host_array& whole, const am::shard_index& block) {
  return whole.slice({{block[0].start, block[0].stop, 1}});
}

} // namespace

TEST_CASE("make_array_from_callback: blocks land on their devices, replicas from one call", "[unit][make_array]") {
  am::runtime rt(am::testing::cpus_only(4));
  am::mesh m(am::create_device_mesh({2, 2}, am::devices()), {"x", "y"});
  const host_array whole = host_array::arange(24, am::dtype::float32).reshape({6, 4});
  int calls = 0;
  auto x = am::make_array_from_callback({6, 4}, am::make_named_sharding(m, am::P("x")), [&](const am::shard_index& b) {
    ++calls;
    return rows_of(whole, b);
  });
  CHECK(calls == 2); // two distinct blocks, each on two devices
  CHECK(x.addressable_shards().size() == 4);
  CHECK(am::array_identical(x.to_host(), whole));
}

TEST_CASE("make_array_from_callback: the array keeps the values of the call, not later changes", "[unit][make_array]") {
  am::runtime rt(am::testing::cpus_only(4));
  am::mesh m(am::create_device_mesh({4}, am::devices()), {"x"});
  const host_array whole = host_array::arange(16, am::dtype::int32).reshape({4, 4});
  const host_array expected = whole.copy();
  std::vector<host_array> handed;
  auto x = am::make_array_from_callback({4, 4}, am::make_named_sharding(m, am::P("x")), [&](const am::shard_index& b) {
    handed.push_back(host_array::empty({1, 4}, am::dtype::int32));
    std::memcpy(handed.back().bytes().data(), rows_of(whole, b).bytes().data(), 16);
    return handed.back();
  });
  for (auto& h : handed) // the caller reuses its blocks at once, before the devices have run
    std::memset(h.bytes().data(), 0xff, h.nbytes());
  CHECK(am::array_identical(x.to_host(), expected));
}

TEST_CASE("make_array_from_callback: a block of the wrong shape or dtype is refused", "[unit][make_array]") {
  am::runtime rt(am::testing::cpus_only(4));
  am::mesh m(am::create_device_mesh({4}, am::devices()), {"x"});
  auto s = am::make_named_sharding(m, am::P("x"));
  CHECK_THROWS_WITH(am::make_array_from_callback({8}, s, [](const am::shard_index&) { return host_array::zeros({3}); }),
                    Catch::Contains("the callback returned shape (3,)"));
  int k = 0;
  CHECK_THROWS_WITH(am::make_array_from_callback({8}, s,
                                                 [&](const am::shard_index&) {
                                                   return host_array::zeros({2}, k++ == 0 ? am::dtype::float32 : am::dtype::int32);
                                                 }),
                    Catch::Contains("returned dtype int32"));
}

TEST_CASE("block writer: each shard written once in place, concurrently, an error reaches the array", "[unit][make_array]") {
  am::runtime rt(am::testing::cpus_only(4));
  am::mesh m(am::create_device_mesh({4}, am::devices()), {"x"});
  auto s = am::make_named_sharding(m, am::P("x"));
  std::atomic<int> writes{0};
  auto x = am::detail::make_array_from_block_writer({8, 2}, am::dtype::int64, s,
                                                    [&](const am::shard_index& b, std::byte* destination, std::size_t size) {
                                                      ++writes;
                                                      REQUIRE(size == 4 * sizeof(std::int64_t));
                                                      auto* out = reinterpret_cast<std::int64_t*>(destination);
                                                      for (std::int64_t i = 0; i < 4; ++i)
                                                        out[i] = b[0].start * 2 + i;
                                                    });
  CHECK(am::array_identical(x.to_host(), host_array::arange(16).reshape({8, 2})));
  CHECK(writes == 4);
  auto broken = am::detail::make_array_from_block_writer({8}, am::dtype::float32, s,
                                                         [](const am::shard_index& b, std::byte*, std::size_t) {
                                                           if (b[0].start == 4)
                                                             throw am::value_error("The checkpoint file 2.npy is truncated");
                                                         });
  CHECK_THROWS_WITH(broken.block_until_ready(), "The checkpoint file 2.npy is truncated");
}

TEST_CASE("block writer: empty shards get a zero-size write, scalars one element", "[unit][make_array]") {
  am::runtime rt(am::testing::cpus_only(4));
  am::mesh m(am::create_device_mesh({4}, am::devices()), {"x"});
  std::atomic<int> zero_writes{0};
  auto empty = am::detail::make_array_from_block_writer({8, 0}, am::dtype::float32, am::make_named_sharding(m, am::P("x")),
                                                        [&](const am::shard_index&, std::byte*, std::size_t size) {
                                                          if (size == 0)
                                                            ++zero_writes;
                                                        });
  CHECK(empty.to_host().shape() == host_array::shape_type{8, 0});
  CHECK(zero_writes == 4);
  auto scalar = am::detail::make_array_from_block_writer({}, am::dtype::int32, am::make_named_sharding(m, am::P()),
                                                         [](const am::shard_index& b, std::byte* destination, std::size_t size) {
                                                           REQUIRE(b.empty());
                                                           REQUIRE(size == 4);
                                                           const std::int32_t v = 42;
                                                           std::memcpy(destination, &v, 4);
                                                         });
  CHECK(scalar.to_host().item<std::int32_t>() == 42);
}
