/// The counter-based random generator of random_uniform / random_normal and of key splitting.
///
/// Every value is a pure function of (key, global linear index), so any sharding of an array, any
/// block split and any device (CPU or CUDA) gives the same values. This header compiles as C++20 host
/// code and as CUDA C++17 device code (functions are AM_HOST_DEVICE; no std:: calls).
///
/// Exact definition (the CUDA path must match the float32 uniform bit for bit):
///   philox(c0..c3; k0, k1): Philox-4x32-10 (Salmon et al., SC'11; Random123's philox4x32_10):
///     10 rounds of  (hi0,lo0) = M0*c0, (hi1,lo1) = M1*c2  (32x32 -> 64-bit products),
///                   c = (hi1^c1^k0, lo1, hi0^c3^k1, lo0),
///     with the key bumped by (W0, W1) between rounds; M0 = 0xD2511F53, M1 = 0xCD9E8D57,
///     W0 = 0x9E3779B9, W1 = 0xBB67AE85. The 64-bit key gives k0 = low 32 bits, k1 = high 32 bits.
///   i = the element's global row-major linear index (64-bit).
///   uniform, 32-bit-word types (float32, float16, bfloat16), p = 24, 11, 8 significant bits:
///     w = philox(lo(i/4), hi(i/4), 0, 0)[i % 4];  u = (w >> (32 - p)) * 2^-p   in [0, 1), exact.
///   uniform float64: b = philox(lo(i/2), hi(i/2), 1, 0), j = 2*(i % 2);
///     u = (((b[j] << 32) | b[j+1]) >> 11) * 2^-53.
///   normal (every float type): b = philox(lo(i), hi(i), 2, 0);
///     u1 = ((((b0 << 32) | b1) >> 11) + 1) * 2^-53  in (0, 1],
///     u2 = (((b2 << 32) | b3) >> 11) * 2^-53         in [0, 1),
///     z = sqrt(-2 log u1) * cos(2 pi u2) computed in double, then rounded to the element type.
///   split_key(key, n): b = philox(lo(n), hi(n), 3, 0; key);  (b1 << 32) | b0.
#pragma once

#include <cstdint>

#ifndef AM_HOST_DEVICE
#ifdef __CUDACC__
#define AM_HOST_DEVICE __host__ __device__
#else
#define AM_HOST_DEVICE
#endif
#endif

#ifndef __CUDACC__
#include <cmath>
#endif

namespace am::detail::rng {

/// The four 32-bit words of one Philox block.
struct philox_block {
  std::uint32_t w[4];
};

/// Philox-4x32-10 of counter (c0, c1, c2, c3) under `key` (k0 = low half, k1 = high half).
AM_HOST_DEVICE inline philox_block philox4x32_10(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2,
                                                 std::uint32_t c3, std::uint64_t key) {
  std::uint32_t k0 = static_cast<std::uint32_t>(key);
  std::uint32_t k1 = static_cast<std::uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    std::uint64_t p0 = static_cast<std::uint64_t>(0xD2511F53u) * c0;
    std::uint64_t p1 = static_cast<std::uint64_t>(0xCD9E8D57u) * c2;
    std::uint32_t hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    std::uint32_t hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
  }
  return philox_block{{c0, c1, c2, c3}};
}

/// Philox of a 64-bit counter (low, high words) in domain `domain` (third counter word).
AM_HOST_DEVICE inline philox_block philox_at(std::uint64_t counter, std::uint32_t domain, std::uint64_t key) {
  return philox4x32_10(static_cast<std::uint32_t>(counter), static_cast<std::uint32_t>(counter >> 32),
                       domain, 0u, key);
}

/// The 32-bit random word of element `index` (shared by the 32-bit-word uniform types).
AM_HOST_DEVICE inline std::uint32_t uniform_word32(std::uint64_t key, std::uint64_t index) {
  return philox_at(index >> 2, 0u, key).w[index & 3u];
}

/// A uniform value in [0, 1) with `bits` significant bits (<= 24) from one random word, as float.
AM_HOST_DEVICE inline float word_to_unit_float(std::uint32_t word, int bits) {
  return static_cast<float>(word >> (32 - bits)) * (1.0f / static_cast<float>(1u << bits));
}

/// Uniform float32 in [0, 1) of element `index` (24 random bits).
AM_HOST_DEVICE inline float uniform_float32(std::uint64_t key, std::uint64_t index) {
  return word_to_unit_float(uniform_word32(key, index), 24);
}

/// Uniform float64 in [0, 1) of element `index` (53 random bits).
AM_HOST_DEVICE inline double uniform_float64(std::uint64_t key, std::uint64_t index) {
  philox_block b = philox_at(index >> 1, 1u, key);
  unsigned j = 2u * static_cast<unsigned>(index & 1u);
  std::uint64_t bits = ((static_cast<std::uint64_t>(b.w[j]) << 32) | b.w[j + 1]) >> 11;
  return static_cast<double>(bits) * (1.0 / 9007199254740992.0);
}

/// Standard normal value of element `index` (Box-Muller in double).
AM_HOST_DEVICE inline double normal_float64(std::uint64_t key, std::uint64_t index) {
  philox_block b = philox_at(index, 2u, key);
  std::uint64_t a = ((static_cast<std::uint64_t>(b.w[0]) << 32) | b.w[1]) >> 11;
  std::uint64_t c = ((static_cast<std::uint64_t>(b.w[2]) << 32) | b.w[3]) >> 11;
  double u1 = static_cast<double>(a + 1) * (1.0 / 9007199254740992.0);
  double u2 = static_cast<double>(c) * (1.0 / 9007199254740992.0);
  const double two_pi = 6.283185307179586476925286766559;
  return ::sqrt(-2.0 * ::log(u1)) * ::cos(two_pi * u2);
}

/// A new key derived from `key` and `index`, deterministically (for splitting keys).
AM_HOST_DEVICE inline std::uint64_t split_key(std::uint64_t key, std::uint64_t index) {
  philox_block b = philox_at(index, 3u, key);
  return (static_cast<std::uint64_t>(b.w[1]) << 32) | b.w[0];
}

} // namespace am::detail::rng

namespace am::detail {
/// See rng::split_key: the array layer's key splitting.
using rng::split_key;
} // namespace am::detail
