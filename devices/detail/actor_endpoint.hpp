/// The endpoint of one of this process's own devices: its device actor, and the key each caller's
/// lane to it is numbered against. Every call enters the device's lane here, from a user thread's
/// own outbox or from a worker's call server (one outbox per remote caller). Internal.
#pragma once

#include "actors/detail/messages.hpp"
#include "devices/detail/device_endpoint.hpp"

#include <caf/actor.hpp>

#include <cstdint>
#include <memory>

namespace am::detail {

/// A device whose actor runs in this process.
class actor_endpoint final : public device_endpoint {
public:
  actor_endpoint(device where, caf::actor device_actor, std::uint64_t lane_key)
    : device_endpoint(std::move(where)), actor(std::move(device_actor)), lane_key(lane_key) {}

  caf::actor actor;           ///< the device actor; reset by the runtime once it has exited
  const std::uint64_t lane_key; ///< names this device's lanes in each thread's outboxes

  device_reach reach() const noexcept override { return device_reach::here; }
  std::vector<shard_future> execute(runtime_impl& rt, std::shared_ptr<const program> code,
                                    std::vector<shard_future> inputs) const override;
  shard_future upload(runtime_impl& rt, std::vector<std::byte> bytes, value_type type) const override;
  shard_future upload_written(runtime_impl& rt, value_type type, buffer_writer write) const override;
  future<std::vector<std::byte>> fetch(runtime_impl& rt, shard_future shard) const override;

  /// Queues `work` as the next call of lane `box` to this device, and sends the device a take
  /// message when none is pending. Throws am::runtime_error once the runtime stops (the work's
  /// promises then fail as it is dropped).
  void send_in_lane(runtime_impl& rt, const std::shared_ptr<device_outbox>& box, device_work work) const;
};

} // namespace am::detail
