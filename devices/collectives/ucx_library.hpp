/// UCX's point-to-point layer (libucp, Debian's libucx0), opened at run time: a process that never
/// makes a communicator, or a machine without UCX, never loads it. Internal to shm_mesh.cpp.
#pragma once

#include <ucp/api/ucp.h>

#include <string>

namespace am::detail {

/// The UCX functions the shared-memory mesh calls, resolved from libucp.so.0 and libucs.so.0.
struct ucx_library {
  decltype(&ucp_config_read) config_read;
  decltype(&ucp_config_modify) config_modify;
  decltype(&ucp_config_release) config_release;
  decltype(&ucp_init_version) init_version;
  decltype(&ucp_cleanup) cleanup;
  decltype(&ucp_worker_create) worker_create;
  decltype(&ucp_worker_destroy) worker_destroy;
  decltype(&ucp_worker_get_address) worker_get_address;
  decltype(&ucp_worker_release_address) worker_release_address;
  decltype(&ucp_worker_progress) worker_progress;
  decltype(&ucp_worker_arm) worker_arm;
  decltype(&ucp_worker_get_efd) worker_get_efd;
  decltype(&ucp_worker_signal) worker_signal;
  decltype(&ucp_ep_create) ep_create;
  decltype(&ucp_ep_close_nbx) ep_close_nbx;
  decltype(&ucp_tag_send_nbx) tag_send_nbx;
  decltype(&ucp_tag_recv_nbx) tag_recv_nbx;
  decltype(&ucp_request_check_status) request_check_status;
  decltype(&ucp_request_cancel) request_cancel;
  decltype(&ucp_request_free) request_free;
  decltype(&ucs_status_string) status_string;

  /// The library, loaded on first use (thread-safe), or null when it cannot be loaded; then
  /// unavailable_reason() says why. Before loading, sets UCX's own process-wide settings that a
  /// library inside someone else's program must not impose, unless the user set them: no signal
  /// handlers of UCX's (UCX_HANDLE_ERRORS=none, UCX_ERROR_SIGNALS empty: the program's and the
  /// sanitizers' handlers stay), no patching of malloc and mmap (UCX_MEM_MALLOC_HOOKS=no,
  /// UCX_MEM_MMAP_HOOK_MODE=none), no warning about other UCX_ variables, and no log lines of
  /// UCX's below fatal (UCX_LOG_LEVEL=fatal: the communicator reports failures in its own words).
  static const ucx_library* get();

  /// Why get() returned null ("" when it did not).
  static const std::string& unavailable_reason();
};

} // namespace am::detail
