/// Which kernels OpenBLAS runs, chosen from what the CPU can do rather than from its model table.
///
/// Debian's OpenBLAS (0.3.21, DYNAMIC_ARCH) picks its kernels by CPU model; a model newer than its
/// table falls back to SSE3 ("Prescott") kernels, several times slower than the CPU's AVX-512 ones
/// (measured: doc/performance.md, "BLAS kernels chosen from the CPU's features"). Before the first
/// product, the process checks the kernels' vector width against the CPU's (AVX-512, AVX2 with FMA,
/// AVX) and, when they are narrower and the user set no OPENBLAS_CORETYPE (which always wins), has
/// OpenBLAS choose again with the core type the CPU's features name. Internal.
#pragma once

#include <string>
#include <string_view>

namespace am::detail {

/// The vector features that decide the kernels.
struct cpu_vector_features {
  bool avx = false;
  bool avx2 = false;
  bool fma = false;
  bool avx512 = false;     ///< AVX-512 F, BW, VL and DQ (what OpenBLAS's SkylakeX kernels use)
  bool avx512bf16 = false; ///< with AVX512_BF16 (Cooper Lake, Sapphire Rapids, Zen 4)
  bool amd = false;
};

/// This CPU's features (the OS must also save the registers: GCC's checks include that).
cpu_vector_features this_cpu_features() noexcept;

/// The widest vectors of `f` the kernels can use: 512, 256 (AVX2 with FMA, or AVX) or 128.
int vector_bits(const cpu_vector_features& f) noexcept;

/// The vector width of the kernels of OpenBLAS core type `core` (its names, any case): 512 for
/// SkylakeX and Cooperlake, 256 for Haswell, Zen and the AVX cores, 128 for the older; 0 unknown.
int core_vector_bits(std::string_view core) noexcept;

/// The OpenBLAS core type that `f` names: Cooperlake, SkylakeX, Zen, Haswell, Sandybridge, or ""
/// when the CPU has no AVX (OpenBLAS's own choice is then as good as any).
std::string core_for(const cpu_vector_features& f);

/// What OpenBLAS runs and why.
struct blas_kernel_choice {
  std::string library;   ///< "OpenBLAS 0.3.21 ..." (its configuration string)
  std::string core;      ///< the core type whose kernels run now
  std::string detected;  ///< the one OpenBLAS chose by itself
  std::string why;       ///< one line: who chose `core`
};

/// Makes sure OpenBLAS runs kernels as wide as the CPU's vectors (once per process, before the
/// first product; later calls return the same answer) and says which it runs.
const blas_kernel_choice& ensure_blas_kernels();

/// Has OpenBLAS select the kernels of core type `core` now (no product may run meanwhile).
/// Returns the core type it then runs. For ensure_blas_kernels and its test.
std::string select_openblas_core(const std::string& core);

/// The core type OpenBLAS runs now.
std::string openblas_core();

} // namespace am::detail
