// random_uniform / random_normal element values for both CUDA paths (precompiled and fused), from
// the shared generator devices/detail/random_counter.hpp (JAX's threefry2x32, partitionable layout):
// a value is a pure function of (key, global linear index), so a CUDA device gives the CPU device's
// values and JAX's: uniform values, random bits and float16/bfloat16/float32 normal values bit for
// bit (the same fused arithmetic and frexpf); float64 normal values through the device's log, which
// can differ from the C library's in the last bit.
// Included after device_math.cuh; includes nothing NVRTC lacks (its <cstdint> is the minimal header
// text that nvrtc_std_headers.cpp supplies).
#pragma once

#include "devices/detail/random_counter.hpp"

namespace amd {

/// The value of element `index` (global, row-major) of a random_uniform (NORMAL = 0) or
/// random_normal (NORMAL = 1) array of dtype D under `key`: uniform or normal values of a float D,
/// JAX's random bits of an integer D (uint8: 8 bits; int32 / int64: the bits of uint32 / uint64).
template <int D, int NORMAL>
__device__ __forceinline__ typename dt<D>::C random_value(u64 key, i64 index) {
  namespace rng = am::detail::rng;
  u64 i = (u64)index;
  if constexpr (D == 1) {
    return (unsigned char)rng::bits32(key, i);
  } else if constexpr (D == 2) {
    return (int)rng::bits32(key, i);
  } else if constexpr (D == 3) {
    return (i64)rng::bits64(key, i);
  } else if constexpr (D == 7) {
    return NORMAL ? rng::normal_float64(key, i) : rng::uniform_float64(key, i);
  } else if constexpr (D == 6) {
    return NORMAL ? rng::normal_float32(key, i) : rng::uniform_float32(key, i);
  } else if constexpr (D == 4 || D == 5) {
    constexpr int m = D == 4 ? 10 : 7;
    if constexpr (NORMAL) // rounded to the type, then times sqrt(2) rounded to the type
      return dt<D>::fix(dt<D>::fix(rng::normal_erf_inv32(key, i, 16, m)) * dt<D>::fix(1.41421356f));
    else
      return rng::uniform_unit32(key, i, 16, m); // exact in the type
  } else {
    return 0; // not reached: programs check the dtype
  }
}

/// jax.random.uniform's range of a float D: max(low, u * span + low), fused for float32 / float64
/// (as XLA computes it), rounded after each operation for the 16-bit types.
template <int D>
__device__ __forceinline__ typename dt<D>::C random_in_range(typename dt<D>::C u, double low, double span) {
  namespace rng = am::detail::rng;
  if constexpr (D == 7) {
    return rng::in_range_float64(u, span, low);
  } else if constexpr (D == 6) {
    return rng::in_range_float32(u, (float)span, (float)low);
  } else {
    float lo = dt<D>::fix((float)low);
    float v = dt<D>::fix(dt<D>::fix(u * dt<D>::fix((float)span)) + lo);
    return v < lo ? lo : v;
  }
}

} // namespace amd
