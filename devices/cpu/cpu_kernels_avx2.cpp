// AVX2 kernels: compiled with -mavx2 -mfma (devices/CMakeLists.txt) and only called when the CPU has
// both (see cpu_kernels.cpp). Transcendentals are SLEEF's 8-/4-wide u35 functions (exp and pow: u10).
#include "actormesh/actors/float16.hpp"
#include "devices/cpu/cpu_kernels.hpp"
#include "devices/cpu/cpu_sources.hpp"
#include "devices/detail/random_counter.hpp"

#include <immintrin.h>
#include <math.h>
#include <sleef.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace am::detail {

namespace {

struct vec_f32 {
  using element = float;
  using type = __m256;
  static constexpr int width = 8;
  static type load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, type v) { _mm256_storeu_ps(p, v); }
  static type pow(type x, type y) { return Sleef_powf8_u10avx2(x, y); }
  static type set1(float e) { return _mm256_set1_ps(e); }
  static type add(type a, type b) { return _mm256_add_ps(a, b); }
  // max_ps/min_ps return their second operand when either is NaN or both are equal: acc, unless v is NaN.
  static type keep_max(type acc, type v) { return _mm256_blendv_ps(_mm256_max_ps(v, acc), v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)); }
  static type keep_min(type acc, type v) { return _mm256_blendv_ps(_mm256_min_ps(v, acc), v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)); }
  template <opcode Op>
  static type apply(type x) {
    if constexpr (Op == opcode::sin) return Sleef_sinf8_u35avx2(x);
    else if constexpr (Op == opcode::cos) return Sleef_cosf8_u35avx2(x);
    else if constexpr (Op == opcode::tanh) return Sleef_tanhf8_u35avx2(x);
    else if constexpr (Op == opcode::exp) return Sleef_expf8_u10avx2(x);
    else if constexpr (Op == opcode::log) return Sleef_logf8_u35avx2(x);
    else return _mm256_sqrt_ps(x);
  }
};

struct vec_f64 {
  using element = double;
  using type = __m256d;
  static constexpr int width = 4;
  static type load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, type v) { _mm256_storeu_pd(p, v); }
  static type pow(type x, type y) { return Sleef_powd4_u10avx2(x, y); }
  static type set1(double e) { return _mm256_set1_pd(e); }
  static type add(type a, type b) { return _mm256_add_pd(a, b); }
  static type keep_max(type acc, type v) { return _mm256_blendv_pd(_mm256_max_pd(v, acc), v, _mm256_cmp_pd(v, v, _CMP_UNORD_Q)); }
  static type keep_min(type acc, type v) { return _mm256_blendv_pd(_mm256_min_pd(v, acc), v, _mm256_cmp_pd(v, v, _CMP_UNORD_Q)); }
  template <opcode Op>
  static type apply(type x) {
    if constexpr (Op == opcode::sin) return Sleef_sind4_u35avx2(x);
    else if constexpr (Op == opcode::cos) return Sleef_cosd4_u35avx2(x);
    else if constexpr (Op == opcode::tanh) return Sleef_tanhd4_u35avx2(x);
    else if constexpr (Op == opcode::exp) return Sleef_expd4_u10avx2(x);
    else if constexpr (Op == opcode::log) return Sleef_logd4_u35avx2(x);
    else return _mm256_sqrt_pd(x);
  }
};

#define AM_KERNELS_VECTOR 1
#include "devices/cpu/cpu_kernels_impl.inc"
#include "devices/cpu/cpu_reduce_kernels.inc"
#include "devices/cpu/cpu_unravel.inc"
#include "devices/cpu/cpu_random_kernels.inc"
#include "devices/cpu/cpu_kernels_tables.inc"

} // namespace

const kernel_table& avx2_kernels() {
  static const kernel_table table = build_table();
  return table;
}

} // namespace am::detail
