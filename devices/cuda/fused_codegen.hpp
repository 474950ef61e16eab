/// Generates the CUDA source of one fused elementwise kernel (doc/architecture.md, "Per-shard
/// programs"): every member of a fused stage becomes one line of a grid-stride loop, so the region
/// reads its inputs once and writes only the values needed later. Plain C++ (no CUDA headers):
/// tested without a GPU.
#pragma once

#include "actormesh/actors/program.hpp"
#include "devices/cuda/cuda_plan.hpp"
#include "devices/cuda/nvrtc_compiler.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace am::detail::cuda {

/// The name of the generated kernel (extern "C", so NVRTC keeps it unmangled).
inline constexpr const char* fused_kernel_name = "am_fused";

/// The kernel of fused stage `s` without the prelude. Its parameters, in order: one typed pointer
/// per `s.inputs`, one per `s.outputs`, one double per `s.scalars`, then the element count
/// (long long). Shapes appear in the source only where broadcasts and random sources need them, and
/// constants are arguments, so programs that differ only in sizes or scalars share one kernel.
std::string fused_kernel_body(const program& p, const execution_plan& plan, const stage& s);

/// The kernel arguments of a random member, after its key: the global linear index of the block's
/// first element (the shard's offsets times the global strides).
std::int64_t random_base(const instruction& ins);

/// The full NVRTC translation unit: the prelude (#includes of device_math.cuh and the random
/// generator) followed by `body`. Compile it with `fused_kernel_headers()`.
std::string fused_kernel_source(const std::string& body);

/// The prelude alone.
const std::string& fused_kernel_prelude();

/// The headers the prelude includes, as NVRTC needs them: the device sources embedded at build time
/// and stand-ins for the standard headers they use.
const std::vector<source_header>& fused_kernel_headers();

} // namespace am::detail::cuda
