/// float32 matrix products through oneDNN (dnnl_sgemm), loaded at run time from Debian's libdnnl2.
///
/// Measured against OpenBLAS, BLIS and oneDNN side by side (bench/bench_blas_libraries.cpp,
/// doc/performance.md), oneDNN's float32 product was the fastest of the three from 512² up, and
/// OpenBLAS's float64 product the fastest of its kind (oneDNN has none), so CPU devices make float32
/// products with oneDNN when it is installed and float64 ones with OpenBLAS. The library is opened
/// when the first float32 product runs (dlopen): a process that makes none does not load it, and a
/// machine without it (a GPU machine carrying only the runtime's own libraries) keeps OpenBLAS.
/// AM_SGEMM=openblas keeps OpenBLAS for float32 too; so does a sanitizer build (LeakSanitizer cannot
/// read a dlopen'ed library's thread-local storage, ThreadSanitizer not see into its OpenMP). Internal.
#pragma once

#include <cstdint>
#include <string>

namespace am::detail {

/// Which library makes float32 products, and why.
struct sgemm_choice {
  bool onednn = false; ///< true: oneDNN; false: OpenBLAS
  std::string why;     ///< one line, for `actormesh info`
};

/// The choice for an AM_SGEMM value (null when unset: oneDNN when installed) and whether oneDNN
/// could be opened (`found`, with its version text). Throws am::value_error for another value.
sgemm_choice choose_sgemm(const char* setting, bool found, const std::string& version);

/// This process's choice (AM_SGEMM read and oneDNN opened once, on first use).
const sgemm_choice& float32_products();

/// The vector width of the kernels oneDNN runs (512, 256 or 128 bits, from its effective CPU ISA);
/// 0 when oneDNN is not in use.
int onednn_vector_bits();

/// C = op(A) op(B) through oneDNN, row-major (op: transposed when `transpose_*`), as cblas_sgemm
/// with alpha 1 and beta 0. Returns false, computing nothing, when oneDNN is not in use or refuses
/// the call; the caller then uses OpenBLAS.
bool onednn_sgemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
                  const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc);

} // namespace am::detail
