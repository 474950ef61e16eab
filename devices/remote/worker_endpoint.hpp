/// The endpoint of a worker's device on the controller of a single-controller cluster: every call
/// becomes a request over the controller's link to that worker (controller_link.hpp), and a move
/// to or from the device is ordered at both ends by the link. Internal.
#pragma once

#include "devices/detail/device_endpoint.hpp"

namespace am::detail::remote {

class controller_link;

/// A worker's device, driven from the controller.
class worker_endpoint final : public device_endpoint {
public:
  /// `link` outlives the endpoint (the runtime owns both).
  worker_endpoint(device where, controller_link& link) : device_endpoint(std::move(where)), link_(link) {}

  device_reach reach() const noexcept override { return device_reach::through_link; }
  std::vector<shard_future> execute(runtime_impl& rt, std::shared_ptr<const program> code,
                                    std::vector<shard_future> inputs) const override;
  shard_future upload(runtime_impl& rt, std::vector<std::byte> bytes, value_type type) const override;
  shard_future upload_written(runtime_impl& rt, value_type type, buffer_writer write) const override;
  future<std::vector<std::byte>> fetch(runtime_impl& rt, shard_future shard) const override;
  std::optional<shard_future> move_both_ends(runtime_impl& rt, const device& from, const shard_future& value,
                                             const device& to, const value_type& type,
                                             std::uint32_t tag) const override;

private:
  controller_link& link_;
};

} // namespace am::detail::remote
