/// Compiled fused kernels, process-wide, in plain C++ (no CUDA headers): NVRTC turns a generated
/// source into a cubin for one compute capability, cudart loads it (cudaLibraryLoadData +
/// cudaLibraryGetKernel, CUDA 12+: no libcuda in the link) and launches it (cudaLaunchKernel). A
/// library loaded this way is context-independent, so one load serves every device of that
/// capability; kernels are cached by (capability, source) and never unloaded.
#pragma once

#include <cstdint>
#include <string>

namespace am::detail::cuda {

/// A loaded kernel (a cudaKernel_t).
using kernel_handle = void*;

/// The compute capability of CUDA device `ordinal` as major * 10 + minor (90 for an H100/H200).
/// Throws am::runtime_error.
int compute_capability(int ordinal);

/// The kernel named `name` in `source`, compiled with `fused_kernel_headers()` for `sm_<arch>`
/// and loaded once per process. Throws am::runtime_error with the compiler's log when NVRTC is
/// missing, compilation fails or the cubin does not load.
kernel_handle load_kernel(const std::string& source, const std::string& name, int arch);

/// Launches `kernel` with 256-thread blocks for a grid-stride loop over `n` elements on `stream`
/// (a cudaStream_t); `args` points to each kernel argument in order. Throws am::runtime_error.
void launch_kernel(kernel_handle kernel, std::int64_t n, void** args, void* stream);

/// Number of kernels compiled by this process so far (for tests and logs).
std::uint64_t compiled_kernel_count() noexcept;

} // namespace am::detail::cuda
