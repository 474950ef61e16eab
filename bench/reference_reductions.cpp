// AVX2 through target attributes (the rest of the library is built for AVX-512): the peer is held
// to the instruction set its target names (doc/performance.md, "Item 2: reductions"), 8 lanes wide.
#include "reference_reductions.hpp"

#include <immintrin.h>

#include <cmath>
#include <limits>
#include <thread>
#include <vector>

namespace am::bench {

namespace {

#define AM_AVX2 __attribute__((target("avx2,fma")))

/// One lane-wise step of `kind`: max/min keep a NaN once seen.
AM_AVX2 inline __m256 step(reduce_kind kind, __m256 acc, __m256 v) {
  if (kind == reduce_kind::sum)
    return _mm256_add_ps(acc, v);
  __m256 m = kind == reduce_kind::max ? _mm256_max_ps(acc, v) : _mm256_min_ps(acc, v); // v if either is NaN
  return _mm256_blendv_ps(m, acc, _mm256_cmp_ps(acc, acc, _CMP_UNORD_Q));
}

inline float step1(reduce_kind kind, float acc, float v) {
  if (kind == reduce_kind::sum)
    return acc + v;
  if (std::isnan(acc) || std::isnan(v))
    return std::numeric_limits<float>::quiet_NaN();
  return kind == reduce_kind::max ? std::max(acc, v) : std::min(acc, v);
}

float identity(reduce_kind kind) {
  if (kind == reduce_kind::sum)
    return 0.0f;
  return kind == reduce_kind::max ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
}

/// x[0..n) to one value: four 8-lane accumulators, then across lanes.
template <reduce_kind K>
AM_AVX2 float reduce_run(const float* x, std::int64_t n) {
  const __m256 id = _mm256_set1_ps(identity(K));
  __m256 a0 = id, a1 = id, a2 = id, a3 = id;
  std::int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = step(K, a0, _mm256_loadu_ps(x + i));
    a1 = step(K, a1, _mm256_loadu_ps(x + i + 8));
    a2 = step(K, a2, _mm256_loadu_ps(x + i + 16));
    a3 = step(K, a3, _mm256_loadu_ps(x + i + 24));
  }
  for (; i + 8 <= n; i += 8)
    a0 = step(K, a0, _mm256_loadu_ps(x + i));
  a0 = step(K, step(K, a0, a1), step(K, a2, a3));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, a0);
  float r = lanes[0];
  for (int k = 1; k < 8; ++k)
    r = step1(K, r, lanes[k]);
  for (; i < n; ++i)
    r = step1(K, r, x[i]);
  return r;
}

/// acc[0..n) combined lane-wise with x[0..n).
template <reduce_kind K>
AM_AVX2 void reduce_into(float* acc, const float* x, std::int64_t n) {
  std::int64_t j = 0;
  for (; j + 32 <= n; j += 32)
    for (int k = 0; k < 32; k += 8)
      _mm256_storeu_ps(acc + j + k, step(K, _mm256_loadu_ps(acc + j + k), _mm256_loadu_ps(x + j + k)));
  for (; j + 8 <= n; j += 8)
    _mm256_storeu_ps(acc + j, step(K, _mm256_loadu_ps(acc + j), _mm256_loadu_ps(x + j)));
  for (; j < n; ++j)
    acc[j] = step1(K, acc[j], x[j]);
}

template <reduce_kind K>
void reduce_typed(const float* x, std::int64_t rows, std::int64_t cols, int axis, float* out, int threads) {
  std::vector<std::vector<float>> parts(static_cast<std::size_t>(threads));
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      auto r0 = rows * t / threads, r1 = rows * (t + 1) / threads;
      auto& part = parts[static_cast<std::size_t>(t)];
      if (axis < 0) {
        part.assign(1, reduce_run<K>(x + r0 * cols, (r1 - r0) * cols));
      } else if (axis == 0) {
        part.assign(static_cast<std::size_t>(cols), identity(K));
        for (auto r = r0; r < r1; ++r)
          reduce_into<K>(part.data(), x + r * cols, cols);
      } else {
        for (auto r = r0; r < r1; ++r)
          out[r] = reduce_run<K>(x + r * cols, cols);
      }
    });
  for (auto& t : ts)
    t.join();
  if (axis < 0) {
    float r = parts[0][0];
    for (int t = 1; t < threads; ++t)
      r = step1(K, r, parts[static_cast<std::size_t>(t)][0]);
    out[0] = r;
  } else if (axis == 0) {
    std::copy(parts[0].begin(), parts[0].end(), out);
    for (int t = 1; t < threads; ++t)
      reduce_into<K>(out, parts[static_cast<std::size_t>(t)].data(), cols);
  }
}

} // namespace

bool reference_reduce_supported() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

void reference_reduce(reduce_kind kind, const float* x, std::int64_t rows, std::int64_t cols, int axis,
                      float* out, int threads) {
  threads = std::max(1, static_cast<int>(std::min<std::int64_t>(threads, rows)));
  switch (kind) {
    case reduce_kind::sum: reduce_typed<reduce_kind::sum>(x, rows, cols, axis, out, threads); break;
    case reduce_kind::max: reduce_typed<reduce_kind::max>(x, rows, cols, axis, out, threads); break;
    case reduce_kind::min: reduce_typed<reduce_kind::min>(x, rows, cols, axis, out, threads); break;
  }
}

} // namespace am::bench
