// What the benchmarks that time the dispatch of tiny operations share: the operand (an 8x8 float32
// array sharded over up to 8 devices, so dispatch rather than compute is timed) and the calling
// thread's CPU time.
#pragma once

#include <actormesh.hpp>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <vector>

namespace am::bench {

/// An 8x8 float32 array of zeros sharded along its rows over the first 8 devices (or all, if fewer),
/// ready.
inline am::array tiny_sharded_array() {
  auto devs = am::devices();
  const auto n = static_cast<std::int64_t>(std::min<std::size_t>(devs.size(), 8));
  am::mesh m({n}, std::vector<am::device>(devs.begin(), devs.begin() + n), {"x"});
  auto tiny = am::device_put(am::host_array::zeros({8, 8}, am::dtype::float32), am::make_named_sharding(m, am::P("x")));
  tiny.block_until_ready();
  return tiny;
}

/// The calling thread's CPU time in nanoseconds.
inline double thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

} // namespace am::bench
