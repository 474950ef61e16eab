// The CPU device's buffer pool: size classes, reuse without new memory, statistics, the limit and its
// error text, trimming, and returns from many threads.
#include "devices/detail/buffer_pool.hpp"
#include "devices/cpu/cpu_buffer.hpp"

#include "actormesh/actors/errors.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <thread>
#include <vector>

using am::detail::buffer_pool;

TEST_CASE("size classes are 64-byte multiples at most 12.5% above the request", "[pool]") {
  for (std::size_t bytes : {0, 1, 63, 64, 65, 200, 256, 257, 1000, 4096, 4097, 100000, 33554432, 33554433}) {
    auto c = buffer_pool::size_class(bytes);
    INFO(bytes << " -> " << c);
    CHECK(c >= bytes);
    CHECK(c % 64 == 0);
    CHECK(c <= bytes + bytes / 8 + 64);
    CHECK(buffer_pool::size_class(c) == c);
  }
}

TEST_CASE("a freed block is reused for the next request of its class: no new memory", "[pool]") {
  auto pool = std::make_shared<buffer_pool>(0, 0);
  auto cls = buffer_pool::size_class(100000);
  auto a = pool->allocate(100000);
  auto s = pool->stats();
  CHECK(s.bytes_in_use == cls);
  CHECK(s.bytes_reserved == 0);
  CHECK(s.num_allocs == 1);
  CHECK(pool->system_allocations() == 1);
  pool->release(a);
  s = pool->stats();
  CHECK(s.bytes_in_use == 0);
  CHECK(s.bytes_reserved == cls);
  CHECK(s.peak_bytes_in_use == cls);
  auto b = pool->allocate(100000 - 5); // same class
  CHECK(b.data == a.data);
  s = pool->stats();
  CHECK(s.bytes_in_use == cls);
  CHECK(s.bytes_reserved == 0);
  CHECK(s.num_allocs == 2);
  CHECK(pool->system_allocations() == 1);
  auto c = pool->allocate(100000); // the class's list is empty now: fresh memory
  CHECK(c.data != b.data);
  CHECK(pool->system_allocations() == 2);
  CHECK(pool->stats().peak_bytes_in_use == 2 * cls);
  pool->release(b);
  pool->release(c);
  pool->trim();
  CHECK(pool->stats().bytes_reserved == 0);
  CHECK(reinterpret_cast<std::uintptr_t>(a.data) % 64 == 0);
}

TEST_CASE("over the limit: RESOURCE_EXHAUSTED with the request and the device", "[pool]") {
  auto pool = std::make_shared<buffer_pool>(3, 1 << 20);
  auto a = pool->allocate(512 << 10);
  CHECK(pool->stats().bytes_limit == (1u << 20));
  CHECK_THROWS_AS(pool->allocate(768 << 10), am::out_of_memory_error);
  CHECK_THROWS_WITH(pool->allocate(768 << 10),
                    "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 786432 bytes on CpuDevice(id=3)");
  CHECK(pool->stats().bytes_in_use == (512u << 10)); // a failed request leaves nothing behind
  pool->release(a);
  // The pool holds 512 KiB free; a request that fits only without it trims the pool first.
  auto b = pool->allocate(900 << 10);
  CHECK(pool->stats().bytes_reserved == 0);
  pool->release(b);
}

TEST_CASE("buffers return their memory to the pool from any thread", "[pool]") {
  auto pool = std::make_shared<buffer_pool>(0, 0);
  constexpr int threads = 4;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::vector<am::buffer_ref> held;
      for (int i = 0; i < 3000; ++i) {
        auto n = std::uniform_int_distribution<std::int64_t>(1, 5000)(rng);
        held.push_back(am::detail::make_cpu_buffer(am::dtype::float32, {n}, pool));
        static_cast<float*>(held.back()->data())[n - 1] = 1.0f;
        if (held.size() > 20)
          held.erase(held.begin() + std::uniform_int_distribution<int>(0, 20)(rng));
      }
    });
  for (auto& w : workers)
    w.join();
  auto s = pool->stats();
  CHECK(s.bytes_in_use == 0);
  CHECK(s.num_allocs == threads * 3000);
  CHECK(pool->system_allocations() < s.num_allocs / 4); // mostly reused
}

TEST_CASE("buffers outlive their device's owner and still return memory", "[pool]") {
  am::buffer_ref kept;
  {
    auto pool = std::make_shared<buffer_pool>(0, 0);
    kept = am::detail::make_cpu_buffer(am::dtype::int64, {1000}, pool);
  }
  static_cast<std::int64_t*>(kept->data())[999] = 7;
  auto view = am::detail::reshape_view(kept, {10, 100});
  CHECK(view->data() == kept->data());
  CHECK(view->shape() == am::shape_t{10, 100});
  kept.reset();
  CHECK(static_cast<std::int64_t*>(view->data())[999] == 7);
}
