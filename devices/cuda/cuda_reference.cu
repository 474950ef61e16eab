// The anchor of bench_gpu: complex_computation written by hand as one CUDA kernel, the speed the
// fused kernels generated at run time should reach.
#include "devices/cuda/cuda_reference.hpp"

#include "actormesh/actors/errors.hpp"

#include <cuda_runtime.h>

#include <string>

namespace am::detail::cuda {

namespace {

__global__ void init_kernel(float* x, long long n) {
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    x[i] = -10.0f + 20.0f * static_cast<float>(i % 100003) / 100003.0f;
}

__global__ void complex_computation_kernel(float* __restrict__ out, const float* __restrict__ x, long long n) {
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float a = x[i];
    float y = sinf(a) * cosf(a);
    out[i] = (tanhf(y) + sqrtf(fabsf(a))) * 2.0f;
  }
}

void ok(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw runtime_error(std::string(what) + " failed: " + cudaGetErrorString(err));
  }
}

} // namespace

double time_reference_complex_computation(int ordinal, std::int64_t n, int runs) {
  ok(cudaSetDevice(ordinal), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  float *x = nullptr, *out = nullptr;
  ok(cudaMallocAsync(reinterpret_cast<void**>(&x), static_cast<std::size_t>(n) * sizeof(float), stream), "cudaMallocAsync");
  ok(cudaMallocAsync(reinterpret_cast<void**>(&out), static_cast<std::size_t>(n) * sizeof(float), stream), "cudaMallocAsync");
  long long blocks = (n + 255) / 256;
  unsigned grid = static_cast<unsigned>(blocks > 65535 ? 65535 : (blocks < 1 ? 1 : blocks));
  init_kernel<<<grid, 256, 0, stream>>>(x, n);
  complex_computation_kernel<<<grid, 256, 0, stream>>>(out, x, n); // warm-up
  cudaEvent_t start = nullptr, stop = nullptr;
  ok(cudaEventCreate(&start), "cudaEventCreate");
  ok(cudaEventCreate(&stop), "cudaEventCreate");
  ok(cudaEventRecord(start, stream), "cudaEventRecord");
  for (int r = 0; r < runs; ++r)
    complex_computation_kernel<<<grid, 256, 0, stream>>>(out, x, n);
  ok(cudaGetLastError(), "kernel launch");
  ok(cudaEventRecord(stop, stream), "cudaEventRecord");
  ok(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  ok(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFreeAsync(x, stream);
  cudaFreeAsync(out, stream);
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  return static_cast<double>(ms) / 1000.0 / runs;
}

} // namespace am::detail::cuda
