/// Device source files built into the library as text, for NVRTC: the fused kernels include the
/// same device_math.cuh and random generator the precompiled kernels were built from, so fused and
/// unfused execution share one definition of every operation. Plain C++.
#pragma once

#include "devices/cuda/nvrtc_compiler.hpp"

#include <vector>

namespace am::detail::cuda {

/// Every embedded file under its include name ("devices/cuda/device_math.cuh",
/// "devices/cuda/random_bridge.cuh", "devices/detail/random_counter.hpp"), generated at build time
/// by devices/cuda/embed_sources.cmake.
const std::vector<source_header>& embedded_device_sources();

/// Minimal stand-ins for the standard headers the embedded files include (NVRTC has none).
const std::vector<source_header>& nvrtc_std_headers();

} // namespace am::detail::cuda
