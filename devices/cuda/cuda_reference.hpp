/// Hand-written CUDA kernels the benchmarks measure the runtime against (bench/bench_gpu.cpp), behind
/// a plain C++ interface so the benchmark needs no CUDA headers.
#pragma once

#include <cstdint>

namespace am::detail::cuda {

/// Runs a hand-written kernel of the seed's complex_computation, (tanh(sin x cos x) + sqrt|x|) * 2,
/// over `n` float32 on CUDA device `ordinal`, with its own buffers and stream: one warm-up, then
/// `runs` launches timed with CUDA events. Returns seconds per run. Throws am::runtime_error.
double time_reference_complex_computation(int ordinal, std::int64_t n, int runs);

} // namespace am::detail::cuda
