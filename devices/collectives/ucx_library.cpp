#include "devices/collectives/ucx_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace am::detail {

namespace {

std::string reason;

void default_setting(const char* name, const char* value) {
  if (std::getenv(name) == nullptr)
    ::setenv(name, value, 0);
}

template <class F>
bool resolve(void* handle, const char* symbol, F& out) {
  out = reinterpret_cast<F>(::dlsym(handle, symbol));
  if (out == nullptr)
    reason = std::string("libucp has no ") + symbol;
  return out != nullptr;
}

const ucx_library* load() {
  // Read by UCX's libraries as they load (the error handlers are installed then).
  default_setting("UCX_HANDLE_ERRORS", "none");
  default_setting("UCX_ERROR_SIGNALS", "");
  default_setting("UCX_MEM_MALLOC_HOOKS", "no");
  default_setting("UCX_MEM_MMAP_HOOK_MODE", "none");
  default_setting("UCX_WARN_UNUSED_ENV_VARS", "n");
  default_setting("UCX_LOG_LEVEL", "fatal"); // the communicator reports what fails, in its words
  void* ucs = ::dlopen("libucs.so.0", RTLD_NOW | RTLD_LOCAL);
  void* ucp = ucs ? ::dlopen("libucp.so.0", RTLD_NOW | RTLD_LOCAL) : nullptr;
  if (ucp == nullptr) {
    const char* error = ::dlerror();
    reason = std::string("UCX is not installed (") + (error ? error : "libucp.so.0 not found") + ")";
    return nullptr;
  }
  static ucx_library lib{};
  // Every function of AM_UCX_FUNCTIONS from the handle named by its library (`ucp` or `ucs`
  // here), in the list's order, stopping at the first that is missing.
  bool ok = true;
#define AM_UCX_RESOLVE(library, function) ok = ok && resolve(library, #library "_" #function, lib.function);
  AM_UCX_FUNCTIONS(AM_UCX_RESOLVE)
#undef AM_UCX_RESOLVE
  return ok ? &lib : nullptr;
}

} // namespace

const ucx_library* ucx_library::get() {
  static const ucx_library* loaded = load();
  return loaded;
}

const std::string& ucx_library::unavailable_reason() {
  get();
  return reason;
}

} // namespace am::detail
