/// cuBLAS loaded at run time (dlopen, as NVRTC is): libactormesh links only cudart, so it still
/// loads where the toolkit's 600 MB of libcublas/libcublasLt are absent (the GPU bundle cannot carry
/// them: tools/gpu-bundle.sh); the dot instructions then keep the hand-written kernel. Tried in
/// order: libcublas.so.13, libcublas.so.12, libcublas.so, then this build's toolkit copy. Internal.
#pragma once

#include <cublas_v2.h>

#include <string>

namespace am::detail::cuda {

/// The cuBLAS entry points the device path uses, resolved from the loaded library.
struct cublas_api {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  // cublasGemmEx and its strided-batched form have C++ overloads: the C entry points' types spelled out.
  cublasStatus_t (*gemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                         const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                         cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  cublasStatus_t (*gemm_strided_batched)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                         const void*, const void*, cudaDataType, int, long long, const void*,
                                         cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                         long long, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  decltype(&::cublasGetStatusName) status_name = nullptr;
  decltype(&::cublasGetStatusString) status_string = nullptr;
  /// Why the entry points are null, when they are.
  std::string why_missing;
};

/// The process's cuBLAS, loaded on first use; its `gemm` is null when no library could be loaded.
const cublas_api& cublas();

} // namespace am::detail::cuda
