// The hand-written peers of the random-number benchmark: JAX's generator (threefry2x32,
// devices/detail/random_counter.hpp) called in a plain loop, compiled at -O3 once per instruction
// set (AVX-512, AVX2 with FMA, baseline; reference_random.inc) and picked for this CPU, the way the
// runtime's kernels are: the loop the CPU can run at its widest vectors, with no runtime in between.
#pragma once

#include <cstdint>

namespace am::bench {

/// out[i - begin] = uniform float32 [0, 1) of element i under `key`, for i in [begin, end).
void uniform_float32_loop(std::uint64_t key, float* out, std::int64_t begin, std::int64_t end);

/// out[i - begin] = standard normal float32 of element i under `key`, for i in [begin, end).
void normal_float32_loop(std::uint64_t key, float* out, std::int64_t begin, std::int64_t end);

} // namespace am::bench
