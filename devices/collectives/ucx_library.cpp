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
  const bool ok = resolve(ucp, "ucp_config_read", lib.config_read) && resolve(ucp, "ucp_config_modify", lib.config_modify)
                  && resolve(ucp, "ucp_config_release", lib.config_release)
                  && resolve(ucp, "ucp_init_version", lib.init_version) && resolve(ucp, "ucp_cleanup", lib.cleanup)
                  && resolve(ucp, "ucp_worker_create", lib.worker_create)
                  && resolve(ucp, "ucp_worker_destroy", lib.worker_destroy)
                  && resolve(ucp, "ucp_worker_get_address", lib.worker_get_address)
                  && resolve(ucp, "ucp_worker_release_address", lib.worker_release_address)
                  && resolve(ucp, "ucp_worker_progress", lib.worker_progress)
                  && resolve(ucp, "ucp_worker_arm", lib.worker_arm)
                  && resolve(ucp, "ucp_worker_get_efd", lib.worker_get_efd)
                  && resolve(ucp, "ucp_worker_signal", lib.worker_signal) && resolve(ucp, "ucp_ep_create", lib.ep_create)
                  && resolve(ucp, "ucp_ep_close_nbx", lib.ep_close_nbx)
                  && resolve(ucp, "ucp_tag_send_nbx", lib.tag_send_nbx)
                  && resolve(ucp, "ucp_tag_recv_nbx", lib.tag_recv_nbx)
                  && resolve(ucp, "ucp_request_check_status", lib.request_check_status)
                  && resolve(ucp, "ucp_request_cancel", lib.request_cancel)
                  && resolve(ucp, "ucp_request_free", lib.request_free)
                  && resolve(ucs, "ucs_status_string", lib.status_string);
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
