/// How this process reaches one device of the cluster: one endpoint per device, of one kind per way
/// a device can be reached (its device actor here, a worker's link on a single-controller
/// cluster's controller, or another process that drives it itself). Device calls and shard moves
/// ask the endpoint instead of testing how the cluster runs, so a new way to run (a remote GPU
/// host, say) is one more kind (doc/architecture.md "Device endpoints"). Internal.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/device_info.hpp"
#include "actormesh/actors/future.hpp"
#include "actormesh/actors/program.hpp"
#include "devices/runtime_context.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace am::detail {

class runtime_impl;

/// One device as this process reaches it. The calls are those of devices/calls.hpp, issued after
/// this thread's earlier calls to the same device; a kind that cannot reach its device refuses
/// them with am::runtime_error. Thread-safe; owned by the runtime.
class device_endpoint {
public:
  explicit device_endpoint(device where) : dev(std::move(where)) {}
  virtual ~device_endpoint() = default;
  device_endpoint(const device_endpoint&) = delete;
  device_endpoint& operator=(const device_endpoint&) = delete;

  const device dev; ///< the device, as the cluster's directory lists it

  /// Where the device's work runs, seen from this process.
  virtual device_reach reach() const noexcept = 0;

  /// Runs `code` on the device with `inputs` (shards the device can read).
  virtual std::vector<shard_future> execute(runtime_impl& rt, std::shared_ptr<const program> code,
                                            std::vector<shard_future> inputs) const = 0;

  /// Copies host bytes into a new buffer of the device.
  virtual shard_future upload(runtime_impl& rt, std::vector<std::byte> bytes, value_type type) const = 0;

  /// A new buffer of the device whose bytes `write` fills (on the device's thread when it can).
  virtual shard_future upload_written(runtime_impl& rt, value_type type, buffer_writer write) const = 0;

  /// The bytes of `shard`, one of the device's buffers.
  virtual future<std::vector<std::byte>> fetch(runtime_impl& rt, shard_future shard) const = 0;

  /// A kind that drives its device from another process orders both ends of a move to or from it
  /// itself: moves `value` from `from` to `to` (one of them this endpoint's device) and returns the
  /// shard on `to`. The other kinds return nothing: then each process issues its own side
  /// (devices/transfers.cpp).
  virtual std::optional<shard_future> move_both_ends(runtime_impl& rt, const device& from, const shard_future& value,
                                                     const device& to, const value_type& type,
                                                     std::uint32_t tag) const {
    (void)rt, (void)from, (void)value, (void)to, (void)type, (void)tag;
    return std::nullopt;
  }
};

} // namespace am::detail
