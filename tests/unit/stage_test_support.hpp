// Helpers of the tests of pmap's collective stages: the 8 CPU devices, an array's bits, the
// one-plan path for comparison.
#pragma once

#include "grad_test_support.hpp"

#include "actormesh/parallel/detail/staged_pmap.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace stage_test {

/// The 8 CPU devices of the test's runtime.
inline std::vector<am::device> eight() { return am::devices(am::platform::cpu); }

/// Bytes of every element, to compare bit for bit (NaNs included).
inline std::vector<unsigned char> bits(const am::array& a) {
  auto h = a.to_host();
  std::vector<unsigned char> out(h.nbytes());
  std::memcpy(out.data(), h.bytes().data(), out.size());
  return out;
}

/// Whether every local shard of `r` (on the 8 devices) lies in one buffer: the same memory for all
/// (`blocks` false: a replicated stage result) or, with `blocks`, each shard the block at its
/// position along dim 0 (a scatter stage's).
inline bool shards_in_one_buffer(const am::array& r, bool blocks) {
  auto shards = r.addressable_shards();
  if (shards.size() != 8)
    return false;
  auto base = static_cast<const std::byte*>(shards[0].data.get()->data());
  auto block = shards[0].data.get()->byte_size();
  for (auto& s : shards) {
    auto b = s.data.get();
    auto position = blocks ? static_cast<std::size_t>(s.index.at(0).start) : 0;
    if (b->data() != base + position * block || b->device_id() != s.device.id)
      return false;
  }
  return true;
}

/// Runs `f` with the staged path off (one plan, as inside a trace), restoring it after.
template <class F>
auto one_plan(const F& f) {
  am::detail::set_stages_enabled(false);
  struct restore {
    ~restore() { am::detail::set_stages_enabled(true); }
  } r;
  return f();
}

/// `f` under pmap over 8 devices with stages and as one plan.
template <class F>
void check_same_as_one_plan(const F& f, const am::array& x) {
  auto mapped = am::pmap(f, "i");
  auto staged = bits(mapped(x));
  CHECK(staged == bits(one_plan([&] { return mapped(x); })));
}

/// 6 threads calling `mapped` (a pmapped function whose result, out_axes none, is `factor` times
/// its [8, 9000] float64 argument's constant value) `rounds` times each, each with its own value:
/// every thread gets its own results, with no error.
template <class Mapped>
void check_threads(const Mapped& mapped, double factor, int rounds) {
  constexpr int threads = 6;
  std::atomic<int> wrong{0}, errors{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        for (int r = 0; r < rounds; ++r) {
          double v = t * 100 + r;
          auto x = am::device_put(am::host_array::full({8, 9000}, v, am::dtype::float64), eight()); // 72 KB a device
          auto got = am::testing::values(mapped(x));
          if (got.size() != 9000 || got[0] != factor * v || got[4500] != factor * v || got[8999] != factor * v)
            ++wrong;
        }
      } catch (...) {
        ++errors;
      }
    });
  for (auto& th : pool)
    th.join();
  CHECK(wrong == 0);
  CHECK(errors == 0);
}

/// Calls pmap(f) (out_axes `out`) on a [8, 40000] float64 sample 4 times a round, 4 rounds, each
/// round's runtime stopped with the later calls' stages queued or running (every other round
/// after the first call completed); checks that every result then completes or fails within 10 s:
/// none is left waiting, nothing crashes.
template <class F>
void check_stop_in_flight(const F& f, const am::axis_specs& out) {
  int hung = 0, finished = 0;
  for (int round = 0; round < 4; ++round) {
    std::vector<am::array> kept;
    {
      am::runtime rt(am::testing::eight_cpus());
      auto mapped = am::pmap(f, "i", {0}, out);
      auto x = am::device_put(grad_test::sample({8, 40000}, 9), eight()); // 320 KB a device
      for (int k = 0; k < 4; ++k)
        kept.push_back(mapped(x));
      if (round % 2 == 1)
        kept.front().block_until_ready();
    } // stops with the later calls' stages queued or running
    for (auto& r : kept) {
      try {
        r.block_until_ready(std::chrono::seconds(10));
        ++finished;
      } catch (const am::timeout_error&) {
        ++hung;
      } catch (const std::exception&) {
        ++finished;
      }
    }
  }
  CHECK(hung == 0);
  CHECK(finished == 16);
}

} // namespace stage_test
