#include "devices/cuda/cublas_loader.hpp"

#include "devices/cuda/shared_library.hpp"

#include <mutex>

#ifndef AM_CUBLAS_FALLBACK_PATH
#define AM_CUBLAS_FALLBACK_PATH ""
#endif

namespace am::detail::cuda {

const cublas_api& cublas() {
  static cublas_api a;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string tried;
    void* lib = open_first({"libcublas.so.13", "libcublas.so.12", "libcublas.so", AM_CUBLAS_FALLBACK_PATH}, tried);
    if (!lib) {
      a.why_missing = "cuBLAS not found (tried " + tried + ")";
      return;
    }
    bool ok = resolve(lib, "cublasCreate_v2", a.create) && resolve(lib, "cublasDestroy_v2", a.destroy)
              && resolve(lib, "cublasSetStream_v2", a.set_stream) && resolve(lib, "cublasGemmEx", a.gemm)
              && resolve(lib, "cublasGemmStridedBatchedEx", a.gemm_strided_batched)
              && resolve(lib, "cublasGetStatusName", a.status_name)
              && resolve(lib, "cublasGetStatusString", a.status_string);
    if (!ok) {
      a = cublas_api{};
      a.why_missing = "the loaded cuBLAS library lacks an entry point (too old?)";
    }
  });
  return a;
}

} // namespace am::detail::cuda
