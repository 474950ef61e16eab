/// UCX's point-to-point layer (libucp, Debian's libucx0), opened at run time: a process that never
/// makes a communicator, or a machine without UCX, never loads it. Internal to shm_mesh.cpp.
#pragma once

#include <ucp/api/ucp.h>

#include <string>

namespace am::detail {

/// The UCX functions the shared-memory mesh calls, each named once: X(library, function) stands
/// for `<library>_<function>` (ucp_config_read), resolved from lib<library>.so.0 and kept in the
/// member `function` of ucx_library (config_read). ucx_library.cpp resolves them in this order.
#define AM_UCX_FUNCTIONS(X)                                                                                  \
  X(ucp, config_read)                                                                                        \
  X(ucp, config_modify)                                                                                      \
  X(ucp, config_release)                                                                                     \
  X(ucp, init_version)                                                                                       \
  X(ucp, cleanup)                                                                                            \
  X(ucp, worker_create)                                                                                      \
  X(ucp, worker_destroy)                                                                                     \
  X(ucp, worker_get_address)                                                                                 \
  X(ucp, worker_release_address)                                                                             \
  X(ucp, worker_progress)                                                                                    \
  X(ucp, worker_arm)                                                                                         \
  X(ucp, worker_get_efd)                                                                                     \
  X(ucp, worker_signal)                                                                                      \
  X(ucp, ep_create)                                                                                          \
  X(ucp, ep_close_nbx)                                                                                       \
  X(ucp, tag_send_nbx)                                                                                       \
  X(ucp, tag_recv_nbx)                                                                                       \
  X(ucp, request_check_status)                                                                               \
  X(ucp, request_cancel)                                                                                     \
  X(ucp, request_free)                                                                                       \
  X(ucs, status_string)

/// The UCX functions the shared-memory mesh calls, resolved from libucp.so.0 and libucs.so.0: one
/// member per entry of AM_UCX_FUNCTIONS, `decltype(&ucp_config_read) config_read;` and so on.
struct ucx_library {
#define AM_UCX_MEMBER(library, function) decltype(&library##_##function) function;
  AM_UCX_FUNCTIONS(AM_UCX_MEMBER)
#undef AM_UCX_MEMBER

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
