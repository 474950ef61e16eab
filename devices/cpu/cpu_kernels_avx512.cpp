// AVX-512 kernels: compiled with -mavx512f (devices/CMakeLists.txt) and only called when the CPU has
// AVX-512F (see cpu_kernels.cpp). Transcendentals are SLEEF's 16-/8-wide u35 functions (exp and pow:
// u10, the only ones SLEEF has), sqrt is the hardware's correctly rounded one.
#include "actormesh/actors/float16.hpp"
#include "devices/cpu/cpu_kernels.hpp"
#include "devices/cpu/cpu_sources.hpp"
#include "devices/detail/random_counter.hpp"

#include "devices/cpu/avx512_intrinsics.hpp"
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
  using type = __m512;
  static constexpr int width = 16;
  static type load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, type v) { _mm512_storeu_ps(p, v); }
  static type pow(type x, type y) { return Sleef_powf16_u10avx512f(x, y); }
  static type set1(float e) { return _mm512_set1_ps(e); }
  static type add(type a, type b) { return _mm512_add_ps(a, b); }
  // max_ps/min_ps return their second operand when either is NaN or both are equal: acc, unless v is NaN.
  static type keep_max(type acc, type v) { return _mm512_mask_mov_ps(_mm512_max_ps(v, acc), _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v); }
  static type keep_min(type acc, type v) { return _mm512_mask_mov_ps(_mm512_min_ps(v, acc), _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v); }
  template <opcode Op>
  static type apply(type x) {
    if constexpr (Op == opcode::sin) return Sleef_sinf16_u35avx512f(x);
    else if constexpr (Op == opcode::cos) return Sleef_cosf16_u35avx512f(x);
    else if constexpr (Op == opcode::tanh) return Sleef_tanhf16_u35avx512f(x);
    else if constexpr (Op == opcode::exp) return Sleef_expf16_u10avx512f(x);
    else if constexpr (Op == opcode::log) return Sleef_logf16_u35avx512f(x);
    else return _mm512_mask_sqrt_ps(x, static_cast<__mmask16>(0xffff), x); // (the unmasked form warns in gcc 12)
  }
};

struct vec_f64 {
  using element = double;
  using type = __m512d;
  static constexpr int width = 8;
  static type load(const double* p) { return _mm512_loadu_pd(p); }
  static void store(double* p, type v) { _mm512_storeu_pd(p, v); }
  static type pow(type x, type y) { return Sleef_powd8_u10avx512f(x, y); }
  static type set1(double e) { return _mm512_set1_pd(e); }
  static type add(type a, type b) { return _mm512_add_pd(a, b); }
  static type keep_max(type acc, type v) { return _mm512_mask_mov_pd(_mm512_max_pd(v, acc), _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q), v); }
  static type keep_min(type acc, type v) { return _mm512_mask_mov_pd(_mm512_min_pd(v, acc), _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q), v); }
  template <opcode Op>
  static type apply(type x) {
    if constexpr (Op == opcode::sin) return Sleef_sind8_u35avx512f(x);
    else if constexpr (Op == opcode::cos) return Sleef_cosd8_u35avx512f(x);
    else if constexpr (Op == opcode::tanh) return Sleef_tanhd8_u35avx512f(x);
    else if constexpr (Op == opcode::exp) return Sleef_expd8_u10avx512f(x);
    else if constexpr (Op == opcode::log) return Sleef_logd8_u35avx512f(x);
    else return _mm512_mask_sqrt_pd(x, static_cast<__mmask8>(0xff), x);
  }
};

#define AM_KERNELS_VECTOR 1
#include "devices/cpu/cpu_kernels_impl.inc"
#include "devices/cpu/cpu_reduce_kernels.inc"
#include "devices/cpu/cpu_unravel.inc"
#include "devices/cpu/cpu_random_kernels.inc"
#include "devices/cpu/cpu_kernels_tables.inc"

} // namespace

const kernel_table& avx512_kernels() {
  static const kernel_table table = build_table();
  return table;
}

} // namespace am::detail
