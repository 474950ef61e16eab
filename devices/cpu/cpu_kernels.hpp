/// The CPU kernels behind fused programs: every elementwise operation works on one tile (a run of
/// consecutive elements) at a time, so a fused region chains them over cache-resident tiles. Each
/// instruction set (scalar baseline, AVX2, AVX-512) is compiled in its own translation unit with its
/// own flags; the best one the CPU supports is picked at run time, entries it lacks fall back to the
/// baseline.
#pragma once

#include "actormesh/actors/dtype.hpp"
#include "actormesh/actors/opcode.hpp"

#include <cstdint>
#include <string_view>

namespace am::detail {

/// One kernel call: `n` elements of the value starting at its element `begin` (row-major). `dst`
/// and `src` point at element `begin` (sources reading at other positions get base pointers and
/// find their way through `params`).
struct tile_call {
  void* dst = nullptr;
  const void* src[3] = {nullptr, nullptr, nullptr};
  std::int64_t begin = 0;
  std::int64_t n = 0;
  const void* params = nullptr;
};

/// A tile kernel: computes `call.n` elements.
using tile_kernel = void (*)(const tile_call& call);

/// C[m,n] = A[m,k] x B[k,n], row-major, one dtype (16-bit floats and bool accumulate wider).
using dot_kernel = void (*)(const void* a, const void* b, void* c, std::int64_t m, std::int64_t k,
                            std::int64_t n);

/// A reduction of the `n` consecutive elements `x` of one dtype into the one value at `acc` (of
/// that dtype).
using reduce_run_kernel = void (*)(const void* x, std::int64_t n, void* acc);

/// A reduction of `rows` rows of `n` consecutive elements each, `stride` elements apart, into
/// acc[0..n): each acc[j] combined with the rows' element j, row by row in order.
using reduce_into_kernel = void (*)(const void* x, std::int64_t rows, std::int64_t stride, std::int64_t n,
                                    void* acc);

/// The row of kernel_table::reduce_run / reduce_into of reduce_sum (0), reduce_max (1), reduce_min (2).
constexpr int reduce_slot(opcode op) noexcept {
  return op == opcode::reduce_sum ? 0 : op == opcode::reduce_max ? 1 : 2;
}

/// The row of kernel_table::random of random_uniform (0) and random_normal (1).
constexpr int random_slot(opcode op) noexcept {
  return op == opcode::random_normal ? 1 : 0;
}

/// The instruction sets kernels are compiled for.
enum class cpu_isa : std::uint8_t {
  scalar, ///< baseline x86-64 (SSE2), libm for transcendentals
  avx2,   ///< AVX2 + FMA, SLEEF's 8-wide u35 functions
  avx512, ///< AVX-512F, SLEEF's 16-wide u35 functions
};

/// Kernels of one instruction set; null entries are not provided by it.
struct kernel_table {
  /// By opcode and operand dtype: the one-, two- and three-operand elementwise operations
  /// (comparisons by operand dtype, select by the dtype of its values), not convert.
  tile_kernel elementwise[opcode_count][dtype_count] = {};
  /// By source dtype, then result dtype.
  tile_kernel convert[dtype_count][dtype_count] = {};
  /// JAX's random values (params: random_params, cpu_sources.hpp) by random_slot and dtype; null
  /// where JAX has none (normal values of an integer dtype).
  tile_kernel random[2][dtype_count] = {};
  /// Matrix products by dtype.
  dot_kernel dot[dtype_count] = {};
  /// Reductions by reduce_slot and dtype (vector units, float32/float64 only; elsewhere the
  /// reduction stage's own loops run). Sums are pairwise; max/min propagate NaN.
  reduce_run_kernel reduce_run[3][dtype_count] = {};
  reduce_into_kernel reduce_into[3][dtype_count] = {};
};

/// The baseline kernels: every entry is filled.
const kernel_table& scalar_kernels();
/// AVX2 kernels (call only when the CPU has AVX2 and FMA).
const kernel_table& avx2_kernels();
/// AVX-512 kernels (call only when the CPU has AVX-512F).
const kernel_table& avx512_kernels();

/// The best instruction set this CPU supports, lowered by AM_CPU_ISA=scalar|avx2 when set.
cpu_isa preferred_isa() noexcept;

/// True when this CPU can run kernels of `isa`.
bool isa_supported(cpu_isa isa) noexcept;

/// `scalar`, `avx2`, `avx512`.
std::string_view isa_name(cpu_isa isa) noexcept;

/// The kernels of `isa` (which must be supported) with the baseline's filling the gaps.
const kernel_table& kernels(cpu_isa isa);

} // namespace am::detail
