/// Calls into the lanes: the one path through which array operations, colocated calls and
/// collectives reach the actors. Each call returns at once with futures; the actor resolves them.
/// The program level of the API (actormesh.hpp says what that means): below the array level.
#ifndef ACTORMESH_DEVICES_CALLS_HPP
#define ACTORMESH_DEVICES_CALLS_HPP

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/device_info.hpp"
#include "actormesh/actors/future.hpp"
#include "actormesh/actors/program.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace am {

/// Runs `p` on device `d` after every call this thread sent to `d` before; one future per output.
/// Inputs may come from other devices: the device waits for them without blocking its mailbox
/// order for other callers' calls already ahead.
std::vector<shard_future> execute(const device& d, std::shared_ptr<const program> p,
                                  std::vector<shard_future> inputs);

/// Copies host bytes into a new buffer of `type` on device `d`.
shard_future upload(const device& d, std::vector<std::byte> bytes, value_type type);

/// A new buffer of `type` on device `d` whose bytes `write` puts in place: on the device's thread,
/// straight into the buffer when it is host memory (a CPU device), into a staging block copied after
/// it otherwise; on a worker's device (single-controller mode) on this thread, then sent. How a file
/// is read into a shard without a copy in between (restore_checkpoint). An exception from `write`
/// fails the future. `write` runs concurrently with this thread and other devices' writers.
shard_future upload_written(const device& d, value_type type, buffer_writer write);

/// Copies a shard, once produced, back to the host; ordered after this thread's earlier calls to `d`.
future<std::vector<std::byte>> fetch(const device& d, shard_future shard);

namespace detail {
/// Sends a task to the host actor in this thread's lane.
void submit_host_task(std::function<void()> task);
} // namespace detail

/// Runs `f` on the host actor in this thread's lane: calls from one thread run in the order issued,
/// calls from different threads run concurrently. The result (or exception) arrives in the future.
template <class F>
auto host_call(F&& f) -> future<std::invoke_result_t<std::decay_t<F>>> {
  using R = std::invoke_result_t<std::decay_t<F>>;
  promise<R> p;
  auto result = p.get_future();
  detail::submit_host_task([p, fn = std::forward<F>(f)]() mutable {
    try {
      if constexpr (std::is_void_v<R>) {
        fn();
        p.set_value();
      } else {
        p.set_value(fn());
      }
    } catch (...) {
      p.set_error(std::current_exception());
    }
  });
  return result;
}

} // namespace am

#endif // ACTORMESH_DEVICES_CALLS_HPP
