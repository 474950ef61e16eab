// The hand-written peers of the sharding benchmark: the seed-004 complex_computation and sin over a float32
// buffer with SLEEF's AVX-512 u35 functions (the machine's limit for this math), or SLEEF's scalar
// functions on CPUs without AVX-512.
#pragma once

#include <cstdint>

namespace am::bench {

/// The seed's complex_computation: out[i] = (tanh(sin(x[i]) * cos(x[i])) + sqrt(|x[i]|)) * 2.
void complex_computation_loop(const float* x, float* out, std::int64_t n);

/// out[i] = sin(x[i]) for i in [0, n).
void sin_loop(const float* x, float* out, std::int64_t n);

/// True when the AVX-512 loops are used (else scalar SLEEF).
bool reference_uses_avx512();

} // namespace am::bench
