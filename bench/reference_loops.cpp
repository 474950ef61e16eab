// Compiled with -mavx512f (bench/CMakeLists.txt); the AVX-512 path only runs where the CPU has it.
#include "reference_loops.hpp"

#include "devices/cpu/avx512_intrinsics.hpp" // <immintrin.h> without GCC 12's false warning
#include <sleef.h>

#include <cmath>

namespace am::bench {

bool reference_uses_avx512() {
  return __builtin_cpu_supports("avx512f");
}

void complex_computation_loop(const float* x, float* out, std::int64_t n) {
  std::int64_t i = 0;
  if (reference_uses_avx512()) {
    const __m512 two = _mm512_set1_ps(2.0f);
    for (; i + 16 <= n; i += 16) {
      __m512 v = _mm512_loadu_ps(x + i);
      Sleef___m512_2 sc = Sleef_sincosf16_u35(v); // sin and cos in one call, as a careful hand would
      __m512 z = _mm512_add_ps(Sleef_tanhf16_u35(_mm512_mul_ps(sc.x, sc.y)), _mm512_sqrt_ps(_mm512_abs_ps(v)));
      _mm512_storeu_ps(out + i, _mm512_mul_ps(z, two));
    }
  }
  for (; i < n; ++i)
    out[i] = (Sleef_tanhf_u35(Sleef_sinf_u35(x[i]) * Sleef_cosf_u35(x[i])) + std::sqrt(std::fabs(x[i]))) * 2.0f;
}

void sin_loop(const float* x, float* out, std::int64_t n) {
  std::int64_t i = 0;
  if (reference_uses_avx512())
    for (; i + 16 <= n; i += 16)
      _mm512_storeu_ps(out + i, Sleef_sinf16_u35(_mm512_loadu_ps(x + i)));
  for (; i < n; ++i)
    out[i] = Sleef_sinf_u35(x[i]);
}

} // namespace am::bench
