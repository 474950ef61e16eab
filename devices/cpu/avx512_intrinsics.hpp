/// <immintrin.h> for code compiled for AVX-512 (-mavx512f or a target attribute), without GCC 12's false warning from it: the
/// AVX-512 header starts _mm512_sqrt_ps, _mm512_min_ps and friends from a self-initialized `__Y = __Y`
/// (an intentionally undefined vector), and once those are inlined into a loop -Wmaybe-uninitialized
/// reports that line of the header. The pragma covers the header's own lines only.
#pragma once

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
