#include "devices/cuda/fused_kernels.hpp"

#include "actors/detail/log.hpp"
#include "actormesh/actors/errors.hpp"
#include "devices/cuda/fused_codegen.hpp"
#include "devices/cuda/nvrtc_compiler.hpp"

#include <cuda_runtime_api.h>

#include <atomic>
#include <map>
#include <mutex>
#include <utility>

namespace am::detail::cuda {

namespace {

std::mutex cache_mutex;
std::map<std::pair<int, std::string>, kernel_handle> cache; // never unloaded: kernels are small
std::atomic<std::uint64_t> compiled{0};

std::string cuda_error_text(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")";
}

} // namespace

int compute_capability(int ordinal) {
  int major = 0, minor = 0;
  auto err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ordinal);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw runtime_error("cannot read the compute capability of CUDA device " + std::to_string(ordinal)
                        + ": " + cuda_error_text(err));
  }
  return major * 10 + minor;
}

kernel_handle load_kernel(const std::string& source, const std::string& name, int arch) {
  // One lock for compile and load: two devices asking for the same kernel compile it once.
  std::lock_guard<std::mutex> guard(cache_mutex);
  auto key = std::make_pair(arch, source);
  if (auto it = cache.find(key); it != cache.end())
    return it->second;
  auto result = compile_to_cubin(source, "am_fused.cu", arch, fused_kernel_headers());
  if (!result.ok)
    throw runtime_error("NVRTC could not compile a fused kernel for sm_" + std::to_string(arch) + ": "
                        + result.log);
  log(log_level::debug, "NVRTC compiled a fused kernel for sm_{} in {:.0f} ms ({} bytes of cubin)", arch,
      result.milliseconds, result.cubin.size());
  cudaLibrary_t library = nullptr;
  auto err = cudaLibraryLoadData(&library, result.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw runtime_error("cudaLibraryLoadData failed for a fused kernel: " + cuda_error_text(err));
  }
  cudaKernel_t kernel = nullptr;
  err = cudaLibraryGetKernel(&kernel, library, name.c_str());
  if (err != cudaSuccess) {
    cudaGetLastError();
    cudaLibraryUnload(library);
    throw runtime_error("cudaLibraryGetKernel(" + name + ") failed: " + cuda_error_text(err));
  }
  compiled.fetch_add(1, std::memory_order_relaxed);
  auto handle = reinterpret_cast<kernel_handle>(kernel);
  cache.emplace(std::move(key), handle);
  return handle;
}

void launch_kernel(kernel_handle kernel, std::int64_t n, void** args, void* stream) {
  if (n <= 0)
    return;
  constexpr std::int64_t block = 256;
  std::int64_t blocks = (n + block - 1) / block;
  dim3 grid(static_cast<unsigned>(blocks > 65535 ? 65535 : blocks));
  // A cudaKernel_t is accepted wherever cudart takes a kernel as `const void*` (CUDA 12+).
  auto err = cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, dim3(block), args, 0,
                              static_cast<cudaStream_t>(stream));
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw runtime_error("cudaLaunchKernel failed for a fused kernel: " + cuda_error_text(err));
  }
}

std::uint64_t compiled_kernel_count() noexcept {
  return compiled.load(std::memory_order_relaxed);
}

} // namespace am::detail::cuda
