// AVX2 kernels: compiled with -mavx2 -mfma (devices/CMakeLists.txt) and only called when the CPU has
// both (see cpu_kernels.cpp). Transcendentals are SLEEF's 8-/4-wide u35 functions (exp and pow: u10).
#include "devices/cpu/cpu_kernels.hpp"

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
#include "devices/cpu/cpu_kernels_tables.inc"

} // namespace

const kernel_table& avx2_kernels() {
  static const kernel_table table = build_table();
  return table;
}

} // namespace am::detail
