/// The device actor: one per local device, detached (its own thread), running one total order of
/// calls that respects every caller's order. What a call does on the hardware is the executor's job
/// (CPU or CUDA); ordering, waiting for inputs from other devices and error routing live here.
#pragma once

#include "actormesh/actors/device_info.hpp"
#include "actors/detail/messages.hpp"
#include "actors/detail/stop_signal.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <cstdint>
#include <functional>
#include <memory>

namespace am::detail {

/// Executes device work on one kind of hardware. Called on the device actor's thread only, with
/// every input shard ready and free of errors. Throwing fails the call's outputs with that error.
class device_executor {
public:
  virtual ~device_executor() = default;

  /// Runs a program; must resolve every output promise (possibly later, from a completion callback).
  virtual void run_program(program_call& call) = 0;

  /// Copies host bytes into a new device buffer and resolves the output.
  virtual void upload(upload_call& call) = 0;

  /// Copies a buffer back to the host and resolves the output.
  virtual void fetch(fetch_call& call) = 0;

  /// Work that finishes asynchronously (a CUDA stream) calls `notify(token)` from any thread that
  /// makes no CUDA calls; the device actor then calls `complete(token)` on its own thread.
  using completion_notifier = std::function<void(std::uint64_t token)>;

  /// Receives the notifier once, before any work.
  virtual void set_completion_notifier(completion_notifier) {}

  /// Finishes the asynchronous work behind `token` (resolves promises, releases buffers).
  virtual void complete(std::uint64_t /*token*/) {}
};

/// Spawns a detached device actor for `dev` driving `executor`. Once `stop` is raised, the actor
/// fails every call it has not started with am::runtime_error instead of running it.
caf::actor spawn_device_actor(caf::actor_system& system, const device& dev,
                              std::unique_ptr<device_executor> executor, stop_signal_ptr stop);

} // namespace am::detail
