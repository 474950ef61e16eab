#include "devices/cuda/cuda_blas.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/cuda/cublas_loader.hpp"
#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/cuda_kernels.hpp"

#include <cuda_runtime_api.h>

#include <mutex>
#include <string>

namespace am::detail::cuda {

namespace {

void check_blas(cublasStatus_t status, const char* what, const device& dev) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw runtime_error(std::string(what) + " failed on " + to_string(dev) + ": " + cublas().status_name(status)
                        + " (" + cublas().status_string(status) + ")");
}

/// One lock for creating handles (each device's executor creates its own once; this only keeps two
/// first calls on one stream, should they ever race, from making two).
std::mutex& creation_lock() {
  static std::mutex m;
  return m;
}

int as_int(std::int64_t v, const char* what) {
  if (v < 0 || v > 0x7fffffff)
    throw value_error(std::string("dot on a CUDA device takes ") + what + " up to 2147483647, got " + std::to_string(v));
  return static_cast<int>(v);
}

} // namespace

bool blas_takes(dtype t) noexcept {
  if (!cublas().gemm)
    return false; // no cuBLAS here: the hand-written kernel takes every dtype
  return t == dtype::float16 || t == dtype::bfloat16 || t == dtype::float32 || t == dtype::float64;
}

void blas_dot(device_stream& stream, dtype t, const void* x, const void* y, void* out, const dot_geometry& s) {
  if (s.batch == 0 || s.m == 0 || s.n == 0)
    return;
  if (s.k == 0) { // empty sums (cuBLAS refuses a leading dimension of 0)
    auto bytes = static_cast<std::size_t>(s.batch * s.m * s.n) * size_of(t);
    scoped_device on(stream.dev().local_ordinal);
    check(cudaMemsetAsync(out, 0, bytes, static_cast<cudaStream_t>(stream.handle())), "cudaMemsetAsync", stream.dev());
    return;
  }
  auto handle = static_cast<cublasHandle_t>(stream.blas_handle());
  // Row-major out[m,n] = x[m,k] y[k,n] is column-major out^T[n,m] = y^T[n,k] x^T[k,m]: cuBLAS's A is
  // y and its B is x, each transposed when stored the other way round.
  int m = as_int(s.m, "rows"), n = as_int(s.n, "columns"), k = as_int(s.k, "a contraction");
  int batch = as_int(s.batch, "a batch");
  auto op_y = s.transpose_y ? CUBLAS_OP_T : CUBLAS_OP_N;
  auto op_x = s.transpose_x ? CUBLAS_OP_T : CUBLAS_OP_N;
  int ld_y = s.transpose_y ? k : n, ld_x = s.transpose_x ? m : k;
  long long stride_y = s.y_batched ? static_cast<long long>(s.k) * s.n : 0;
  long long stride_x = static_cast<long long>(s.m) * s.k, stride_out = static_cast<long long>(s.m) * s.n;
  cudaDataType_t type = t == dtype::float64 ? CUDA_R_64F
                        : t == dtype::float32 ? CUDA_R_32F
                        : t == dtype::float16 ? CUDA_R_16F
                                              : CUDA_R_16BF;
  auto compute = t == dtype::float64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  const double one64 = 1.0, zero64 = 0.0;
  const float one32 = 1.0f, zero32 = 0.0f;
  const void* alpha = t == dtype::float64 ? static_cast<const void*>(&one64) : &one32;
  const void* beta = t == dtype::float64 ? static_cast<const void*>(&zero64) : &zero32;
  scoped_device on(stream.dev().local_ordinal);
  if (batch == 1)
    check_blas(cublas().gemm(handle, op_y, op_x, n, m, k, alpha, y, type, ld_y, x, type, ld_x, beta, out, type, n,
                            compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx", stream.dev());
  else
    check_blas(cublas().gemm_strided_batched(handle, op_y, op_x, n, m, k, alpha, y, type, ld_y, stride_y, x, type, ld_x,
                                          stride_x, beta, out, type, n, stride_out, batch, compute,
                                          CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx", stream.dev());
}

void run_dot(device_stream& stream, dtype t, const void* x, const void* y, void* out, const dot_geometry& s) {
  if (blas_takes(t))
    return blas_dot(stream, t, x, y, out, s);
  if (s.transpose_x || s.transpose_y)
    throw value_error("dot on a CUDA device takes transposed operands of float dtypes only, got "
                      + std::string(name(t)));
  if (s.m > 65535LL * 16)
    throw value_error("dot on a CUDA device handles up to 1048560 rows, got " + std::to_string(s.m));
  auto bytes = static_cast<std::int64_t>(size_of(t));
  for (std::int64_t b = 0; b < s.batch; ++b)
    dot(static_cast<char*>(out) + b * s.m * s.n * bytes, static_cast<const char*>(x) + b * s.m * s.k * bytes,
        static_cast<const char*>(y) + (s.y_batched ? b * s.k * s.n * bytes : 0), t, s.m, s.k, s.n, stream.handle());
}

void destroy_blas_handle(void* handle) noexcept {
  if (handle)
    cublas().destroy(static_cast<cublasHandle_t>(handle));
}

void* device_stream::blas_handle() {
  std::lock_guard<std::mutex> lock(creation_lock());
  if (!blas_) {
    scoped_device on(dev_.local_ordinal);
    cublasHandle_t h = nullptr;
    check_blas(cublas().create(&h), "cublasCreate", dev_);
    auto status = cublas().set_stream(h, static_cast<cudaStream_t>(stream_));
    if (status != CUBLAS_STATUS_SUCCESS) {
      cublas().destroy(h);
      check_blas(status, "cublasSetStream", dev_);
    }
    // The default math mode with CUBLAS_COMPUTE_32F: full float32 products, no TF32.
    blas_ = h;
  }
  return blas_;
}

} // namespace am::detail::cuda
