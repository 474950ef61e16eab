/// JAX's random generator: threefry2x32 with JAX's partitionable layout (jax_threefry_partitionable,
/// the default in current JAX), used by random_uniform / random_normal / random bits and by key
/// splitting and folding.
///
/// Every value is a pure function of (key, global row-major linear index), so any sharding of an
/// array, any block split and any device (CPU or CUDA) gives the same values, and they are JAX's:
/// tests/unit/test_jax_random.cpp compares them with a table JAX itself wrote
/// (tools/gen_jax_random_table.py). This header compiles as C++20 host code and as CUDA C++17 device
/// code (functions are AM_HOST_DEVICE; no std:: calls).
///
/// Exact definition:
///   key: JAX's two uint32 words (k0, k1) of jax.random.key_data, packed as (k0 << 32) | k1.
///   threefry2x32(k0, k1; x0, x1): Threefry-2x32 with 20 rounds (Salmon et al., SC'11), as
///     jax.random's threefry2x32 primitive computes it.
///   bits at index i: (b0, b1) = threefry2x32(key; hi32(i), lo32(i)).
///     random bits of 8/16/32 bits: low bits of b0 ^ b1; of 64 bits: (b0 << 32) | b1.
///   uniform [0, 1) of a float type with m mantissa bits and n bits (rng bits r = max(n, 8)):
///     the top m of the r random bits, times 2^-m (JAX sets them as the mantissa of a float in
///     [1, 2) and subtracts 1; the same value, exactly).
///   normal: u = uniform * 2 + lo with lo = nextafter(-1, 0) (exact in the type), then
///     sqrt(2) * erf_inv(u), erf_inv in float32 for the 16- and 32-bit types and in float64 for
///     float64 (Giles' single and double precision polynomials, and log1p, as XLA evaluates them).
///   uniform in [minval, maxval): max(lo, u * (hi - lo) + lo) in the type, lo and hi rounded to it
///     first; for float32 and float64 the multiply-add is fused (one rounding), as XLA does on CPU;
///     16-bit types round after each operation.
///   split(key, n)[j] = bits at index j (both words);  fold_in(key, d) = threefry2x32(key; 0, d).
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

/// The two 32-bit words threefry2x32 gives.
struct word_pair {
  std::uint32_t w0;
  std::uint32_t w1;
};

/// `v` rotated left by `r` bits (0 < r < 32).
AM_HOST_DEVICE inline std::uint32_t rotate_left(std::uint32_t v, int r) {
  return (v << r) | (v >> (32 - r));
}

/// Threefry-2x32, 20 rounds, of counter words (x0, x1) under key words (k0, k1).
AM_HOST_DEVICE inline word_pair threefry2x32(std::uint32_t k0, std::uint32_t k1, std::uint32_t x0,
                                             std::uint32_t x1) {
  const std::uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  const int rotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  x0 += ks[0];
  x1 += ks[1];
  for (int group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      x0 += x1;
      x1 = rotate_left(x1, rotations[group % 2][r]);
      x1 ^= x0;
    }
    x0 += ks[(group + 1) % 3];
    x1 += ks[(group + 2) % 3] + static_cast<std::uint32_t>(group + 1);
  }
  return word_pair{x0, x1};
}

/// Threefry of the packed key `key` ((k0 << 32) | k1) and counter words (x0, x1).
AM_HOST_DEVICE inline word_pair threefry(std::uint64_t key, std::uint32_t x0, std::uint32_t x1) {
  return threefry2x32(static_cast<std::uint32_t>(key >> 32), static_cast<std::uint32_t>(key), x0, x1);
}

/// Both random words of element `index`.
AM_HOST_DEVICE inline word_pair bits_at(std::uint64_t key, std::uint64_t index) {
  return threefry(key, static_cast<std::uint32_t>(index >> 32), static_cast<std::uint32_t>(index));
}

/// The random bits of element `index` for 8-, 16- and 32-bit fields (low bits of the result).
AM_HOST_DEVICE inline std::uint32_t bits32(std::uint64_t key, std::uint64_t index) {
  word_pair b = bits_at(key, index);
  return b.w0 ^ b.w1;
}

/// The random bits of element `index` for 64-bit fields.
AM_HOST_DEVICE inline std::uint64_t bits64(std::uint64_t key, std::uint64_t index) {
  word_pair b = bits_at(key, index);
  return (static_cast<std::uint64_t>(b.w0) << 32) | b.w1;
}

/// Uniform [0, 1) of element `index` for a float type of `nbits` (16 or 32) and `nmant` mantissa
/// bits: 23 (float32), 10 (float16), 7 (bfloat16). Exact in float.
AM_HOST_DEVICE inline float uniform_unit32(std::uint64_t key, std::uint64_t index, int nbits, int nmant) {
  int rng_bits = nmant < 8 ? 8 : nbits;
  std::uint32_t word = bits32(key, index);
  if (rng_bits < 32)
    word &= (1u << rng_bits) - 1u;
  std::uint32_t mantissa = word >> (rng_bits - nmant);
  return static_cast<float>(mantissa) * (1.0f / static_cast<float>(1u << nmant));
}

/// Uniform float32 in [0, 1) of element `index`.
AM_HOST_DEVICE inline float uniform_float32(std::uint64_t key, std::uint64_t index) {
  return uniform_unit32(key, index, 32, 23);
}

/// Uniform float64 in [0, 1) of element `index`.
AM_HOST_DEVICE inline double uniform_float64(std::uint64_t key, std::uint64_t index) {
  return static_cast<double>(bits64(key, index) >> 12) * (1.0 / 4503599627370496.0);
}

/// log(x) in float32 as XLA's CPU code computes it (Cephes' logf: x = m * 2^e with m in
/// [sqrt(1/2), sqrt(2)), a degree-8 polynomial in m - 1 with fused multiply-adds, e * ln 2 added in
/// two parts); for 0 < x < infinity. Equal to XLA's for all but a few in 10^4 inputs (1 ulp).
AM_HOST_DEVICE inline float log_float32(float x) {
  int e = 0;
  float m = ::frexpf(x, &e); // [0.5, 1)
  if (m < 0.707106781186547524f) {
    e -= 1;
    m = (m - 1.0f) + m;
  } else {
    m = m - 1.0f;
  }
  const float p[9] = {7.0376836292e-2f, -1.1514610310e-1f, 1.1676998740e-1f, -1.2420140846e-1f, 1.4249322787e-1f,
                      -1.6668057665e-1f, 2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f};
  float m2 = m * m, m3 = m2 * m;
  float y = ::fmaf(::fmaf(p[0], m, p[1]), m, p[2]);
  float y1 = ::fmaf(::fmaf(p[3], m, p[4]), m, p[5]);
  float y2 = ::fmaf(::fmaf(p[6], m, p[7]), m, p[8]);
  y = ::fmaf(y, m3, y1);
  y = ::fmaf(y, m3, y2);
  y = y * m3;
  float fe = static_cast<float>(e);
  y = ::fmaf(fe, -2.12194440e-4f, y);
  float r = m - m2 * 0.5f;
  r = r + y;
  return ::fmaf(fe, 0.693359375f, r);
}

/// a * b + c with one rounding, for float or double.
template <class T>
AM_HOST_DEVICE inline T fused_multiply_add(T a, T b, T c) {
  if constexpr (sizeof(T) == 4)
    return ::fmaf(a, b, c);
  else
    return ::fma(a, b, c);
}

/// log1p(x) as XLA computes it, for T float or double: Cephes' rational approximation (its double
/// coefficients rounded to T, fused multiply-adds) for |x| below sqrt(2) - 1; above, log(1 + x) with
/// log_float32 for float and the C library's log for double. For -1 < x.
template <class T>
AM_HOST_DEVICE inline T log1p_as_xla(T x) {
  T ax = x < T(0) ? -x : x;
  if (!(ax < T(0.41421356237309504880))) {
    if constexpr (sizeof(T) == 4)
      return log_float32(1.0f + x);
    else
      return ::log(1.0 + x);
  }
  const T num[7] = {T(4.5270000862445199635215e-5), T(4.9854102823193375972212e-1), T(6.5787325942061044846969e0),
                    T(2.9911919328553073277375e1),  T(6.0949667980987787057556e1),  T(5.7112963590585538103336e1),
                    T(2.0039553499201281259648e1)};
  const T den[7] = {T(1.0),                         T(1.5062909083469192043167e1), T(8.3047565967967209469434e1),
                    T(2.2176239823732856465394e2),  T(3.0909872225312059774938e2), T(2.1642788614495947685003e2),
                    T(6.0118660497603843919306e1)};
  T n = T(0), d = T(0);
  for (int i = 0; i < 7; ++i) {
    n = fused_multiply_add(n, x, num[i]);
    d = fused_multiply_add(d, x, den[i]);
  }
  T x2 = x * x;
  T small = (x * x2) * (n / d);
  small = fused_multiply_add(T(-0.5), x2, small);
  return x + small;
}

/// erf_inv in float32 as XLA evaluates it (Giles' single-precision approximation, fused
/// multiply-adds in the polynomial).
AM_HOST_DEVICE inline float erf_inv_float32(float x) {
  const float small[9] = {2.81022636e-08f, 3.43273939e-07f, -3.5233877e-06f, -4.39150654e-06f, 0.00021858087f,
                          -0.00125372503f, -0.00417768164f, 0.246640727f, 1.50140941f};
  const float large[9] = {-0.000200214257f, 0.000100950558f, 0.00134934322f, -0.00367342844f, 0.00573950773f,
                          -0.0076224613f, 0.00943887047f, 1.00167406f, 2.83297682f};
  float w = -log1p_as_xla(-(x * x));
  bool lt = w < 5.0f;
  const float* c = lt ? small : large;
  w = lt ? w - 2.5f : ::sqrtf(w) - 3.0f;
  float p = c[0];
  for (int i = 1; i < 9; ++i)
    p = ::fmaf(p, w, c[i]);
  return p * x;
}

/// erf_inv in float64 as XLA evaluates it: Giles' double-precision approximation (three branches of
/// w = -log1p(-x^2): below 6.25, below 16, above), fused multiply-adds in the polynomials.
AM_HOST_DEVICE inline double erf_inv_float64(double x) {
  const double small[23] = {
      -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
      1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
      6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
      2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
      1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
      4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
      0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533, 0.24015818242558961693,
      1.6536545626831027356};
  const double middle[19] = {
      2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
      1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
      2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
      6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
      0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
      -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334, 3.0838856104922207635};
  const double large[17] = {
      -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
      -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
      2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
      -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
      7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026, 1.0103004648645343977,
      4.8499064014085844221};
  double w = -log1p_as_xla(-(x * x));
  const double* c = small;
  int count = 23;
  if (w < 6.25) {
    w -= 3.125;
  } else if (w < 16.0) {
    c = middle;
    count = 19;
    w = ::sqrt(w) - 3.25;
  } else {
    c = large;
    count = 17;
    w = ::sqrt(w) - 5.0;
  }
  double p = c[0];
  for (int i = 1; i < count; ++i)
    p = ::fma(p, w, c[i]);
  return p * x;
}

/// The input of erf_inv for element `index` of a normal array of a 16/32-bit float type:
/// uniform in (nextafter(-1, 0), 1), exact in the type.
AM_HOST_DEVICE inline float normal_input32(std::uint64_t key, std::uint64_t index, int nbits, int nmant) {
  float lo = -1.0f + 1.0f / static_cast<float>(2u << nmant);
  return uniform_unit32(key, index, nbits, nmant) * 2.0f + lo;
}

/// erf_inv of element `index` of a normal array of a 16/32-bit float type (before the sqrt(2)
/// factor, which is applied in the element type).
AM_HOST_DEVICE inline float normal_erf_inv32(std::uint64_t key, std::uint64_t index, int nbits, int nmant) {
  return erf_inv_float32(normal_input32(key, index, nbits, nmant));
}

/// Standard normal float32 of element `index`.
AM_HOST_DEVICE inline float normal_float32(std::uint64_t key, std::uint64_t index) {
  return 1.41421356f * normal_erf_inv32(key, index, 32, 23);
}

/// Standard normal float64 of element `index`.
AM_HOST_DEVICE inline double normal_float64(std::uint64_t key, std::uint64_t index) {
  double u = uniform_float64(key, index) * 2.0 + (-1.0 + 1.0 / 9007199254740992.0);
  return 1.4142135623730951 * erf_inv_float64(u);
}

/// jax.random.uniform's range for float32: max(low, u * span + low) with one rounding, as XLA
/// fuses the multiply-add (low and span already rounded to float32).
AM_HOST_DEVICE inline float in_range_float32(float u, float span, float low) {
  float v = ::fmaf(u, span, low);
  return v < low ? low : v;
}

/// The same for float64.
AM_HOST_DEVICE inline double in_range_float64(double u, double span, double low) {
  double v = ::fma(u, span, low);
  return v < low ? low : v;
}

/// jax.random.split(key, n)[index], packed.
AM_HOST_DEVICE inline std::uint64_t split_key(std::uint64_t key, std::uint64_t index) {
  word_pair b = bits_at(key, index);
  return (static_cast<std::uint64_t>(b.w0) << 32) | b.w1;
}

/// jax.random.fold_in(key, data), packed.
AM_HOST_DEVICE inline std::uint64_t fold_in_key(std::uint64_t key, std::uint32_t data) {
  word_pair b = threefry(key, 0u, data);
  return (static_cast<std::uint64_t>(b.w0) << 32) | b.w1;
}

} // namespace am::detail::rng

namespace am::detail {
/// See rng::split_key: the array layer's key splitting.
using rng::split_key;
} // namespace am::detail
