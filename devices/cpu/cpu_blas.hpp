/// Matrix products of float32 and float64 on CPU devices through a BLAS (float32: oneDNN's
/// dnnl_sgemm when installed, devices/cpu/onednn_sgemm.hpp, else OpenBLAS's cblas_sgemm; float64:
/// OpenBLAS's cblas_dgemm), at a library's speed instead of the hand-written loop's: 2-D, batched
/// (one call per batch row) and with transposed operands as the calls' transpose flags. The calls
/// of all the process's CPU devices take turns, each using every core: 8 devices sharing 2 cores
/// never run 8 x 2 BLAS threads at once, and one device alone gets all the cores
/// (devices/cpu/blas_thread.hpp: while devices wait for their turn, one thread runs their calls
/// back to back). doc/architecture.md, "CPU programs". Internal.
#pragma once

#include "actormesh/actors/dtype.hpp"
#include "devices/cpu/cpu_kernels.hpp"

#include <cstdint>
#include <vector>

namespace am::detail {

/// Runs one dot instruction (actors/opcode.hpp: 2-D or batched, `attrs` the transpose flags) on
/// dense row-major operands x of shape `xs` and y of shape `ys` into `out`: float32/float64 through
/// BLAS, one call per batch row in one turn, transposes as flags; other dtypes through `fallback`
/// (the instruction set's 2-D kernel) per batch row, transposed operands copied first.
void run_dot(dtype t, const void* x, const std::vector<std::int64_t>& xs, const void* y,
             const std::vector<std::int64_t>& ys, void* out, const std::vector<std::int64_t>& attrs,
             dot_kernel fallback);

} // namespace am::detail
