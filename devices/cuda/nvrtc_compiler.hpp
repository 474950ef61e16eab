/// Run-time compilation of CUDA C++ to a cubin with NVRTC, in plain C++ (no CUDA headers).
///
/// NVRTC is loaded with dlopen on first use (libnvrtc.so.13, then .so.12, then the toolkit's copy
/// this build was configured with) instead of being linked: libnvrtc is 109 MB and is not carried
/// to GPU machines (their image brings its own, see tools/gpu-check.sh), and a process that cannot
/// find it must still start. Without NVRTC the CUDA executor runs programs unfused.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace am::detail::cuda {

/// An include name and the text NVRTC should use for it.
using source_header = std::pair<std::string, std::string>;

/// What a compilation produced.
struct nvrtc_result {
  bool ok = false;         ///< true when `cubin` holds the compiled code
  std::string log;         ///< the compiler's log (warnings and errors), or why NVRTC is missing
  std::vector<char> cubin; ///< the cubin (ELF) for the requested architecture
  double milliseconds = 0; ///< wall time of the compilation
};

/// True when NVRTC could be loaded; otherwise `why` (if given) says what was tried.
bool nvrtc_available(std::string* why = nullptr);

/// NVRTC's version as "13.0", or empty when it is unavailable.
std::string nvrtc_version();

/// Compiles `source` (C++17, precise math, no FMA contraction, so results match the CPU path's
/// arithmetic) for `sm_<arch>` (e.g. 90), resolving #includes from `headers` only. Never throws.
nvrtc_result compile_to_cubin(const std::string& source, const std::string& name, int arch,
                              const std::vector<source_header>& headers = {});

} // namespace am::detail::cuda
