// random_uniform / random_normal element values for both CUDA paths (precompiled and fused), from
// the shared counter-based generator devices/detail/random_counter.hpp: a value is a pure function
// of (key, global linear index), so a CUDA device gives the CPU device's values (float32 uniform bit
// for bit; normal values up to the last bits of the device's log/cos). Included after
// device_math.cuh; includes nothing NVRTC lacks (its <cstdint> is the minimal header text that nvrtc_std_headers.cpp supplies).
#pragma once

#include "devices/detail/random_counter.hpp"

namespace amd {

/// The value of element `index` (global, row-major) of a random_uniform (NORMAL = 0) or
/// random_normal (NORMAL = 1) array of float dtype D under `key`.
template <int D, int NORMAL>
__device__ __forceinline__ typename dt<D>::C random_value(u64 key, i64 index) {
  namespace rng = am::detail::rng;
  u64 i = (u64)index;
  if constexpr (NORMAL) {
    return cvt<D, 7>(rng::normal_float64(key, i));
  } else if constexpr (D == 7) {
    return rng::uniform_float64(key, i);
  } else if constexpr (D == 6) {
    return rng::uniform_float32(key, i);
  } else if constexpr (D == 4) {
    return rng::word_to_unit_float(rng::uniform_word32(key, i), 11); // exact in float16
  } else if constexpr (D == 5) {
    return rng::word_to_unit_float(rng::uniform_word32(key, i), 8); // exact in bfloat16
  } else {
    return cvt<D, 6>(rng::uniform_float32(key, i)); // not reached: programs check the dtype
  }
}

} // namespace amd
