#include "devices/cuda/nvrtc_compiler.hpp"

#include <nvrtc.h>

#include "devices/cuda/shared_library.hpp"

#include <chrono>
#include <mutex>

#ifndef AM_NVRTC_FALLBACK_PATH
#define AM_NVRTC_FALLBACK_PATH ""
#endif

namespace am::detail::cuda {

namespace {

/// The NVRTC entry points this file uses, resolved from the loaded library.
struct nvrtc_api {
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcCreateProgram) create = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy = nullptr;
  decltype(&::nvrtcCompileProgram) compile = nullptr;
  decltype(&::nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) log = nullptr;
  decltype(&::nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) cubin = nullptr;
  decltype(&::nvrtcGetErrorString) error_string = nullptr;
  std::string why_missing;
};

const nvrtc_api& api() {
  static nvrtc_api a;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string tried;
    void* lib = open_first({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", AM_NVRTC_FALLBACK_PATH}, tried);
    if (!lib) {
      a.why_missing = "NVRTC not found (tried " + tried + ")";
      return;
    }
    bool ok = resolve(lib, "nvrtcVersion", a.version) && resolve(lib, "nvrtcCreateProgram", a.create)
              && resolve(lib, "nvrtcDestroyProgram", a.destroy)
              && resolve(lib, "nvrtcCompileProgram", a.compile)
              && resolve(lib, "nvrtcGetProgramLogSize", a.log_size)
              && resolve(lib, "nvrtcGetProgramLog", a.log) && resolve(lib, "nvrtcGetCUBINSize", a.cubin_size)
              && resolve(lib, "nvrtcGetCUBIN", a.cubin) && resolve(lib, "nvrtcGetErrorString", a.error_string);
    if (!ok) {
      a = nvrtc_api{};
      a.why_missing = "the loaded NVRTC library lacks an entry point (too old?)";
    }
  });
  return a;
}

} // namespace

bool nvrtc_available(std::string* why) {
  auto& a = api();
  if (!a.compile && why)
    *why = a.why_missing;
  return a.compile != nullptr;
}

std::string nvrtc_version() {
  auto& a = api();
  int major = 0, minor = 0;
  if (!a.version || a.version(&major, &minor) != NVRTC_SUCCESS)
    return {};
  return std::to_string(major) + "." + std::to_string(minor);
}

nvrtc_result compile_to_cubin(const std::string& source, const std::string& name, int arch,
                              const std::vector<source_header>& headers) {
  nvrtc_result result;
  auto& a = api();
  if (!a.compile) {
    result.log = a.why_missing;
    return result;
  }
  auto start = std::chrono::steady_clock::now();
  std::vector<const char*> header_texts, header_names;
  for (auto& [include_name, text] : headers) {
    header_names.push_back(include_name.c_str());
    header_texts.push_back(text.c_str());
  }
  nvrtcProgram prog = nullptr;
  auto err = a.create(&prog, source.c_str(), name.c_str(), static_cast<int>(headers.size()),
                      header_texts.data(), header_names.data());
  if (err != NVRTC_SUCCESS) {
    result.log = std::string("nvrtcCreateProgram failed: ") + a.error_string(err);
    return result;
  }
  std::string arch_option = "--gpu-architecture=sm_" + std::to_string(arch);
  const char* options[] = {arch_option.c_str(), "-std=c++17", "--fmad=false", "-default-device"};
  err = a.compile(prog, 4, options);
  std::size_t log_size = 0;
  if (a.log_size(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    result.log.resize(log_size);
    a.log(prog, result.log.data());
    result.log.resize(log_size - 1); // drop the terminating NUL
  }
  if (err == NVRTC_SUCCESS) {
    std::size_t size = 0;
    if (a.cubin_size(prog, &size) == NVRTC_SUCCESS && size > 0) {
      result.cubin.resize(size);
      result.ok = a.cubin(prog, result.cubin.data()) == NVRTC_SUCCESS;
    }
    if (!result.ok)
      result.log += "\nno cubin produced for " + arch_option;
  } else if (result.log.empty()) {
    result.log = std::string("nvrtcCompileProgram failed: ") + a.error_string(err);
  }
  a.destroy(&prog);
  result.milliseconds =
    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

} // namespace am::detail::cuda
