/// The endpoint of another process's device in a multi-controller cluster: that process runs its
/// work, so every call from here is refused; shards move to and from it through the shard
/// transfers each side issues (devices/transfers.cpp). Internal.
#pragma once

#include "actormesh/actors/errors.hpp"
#include "devices/detail/device_endpoint.hpp"

namespace am::detail {

/// The error of a call from process `me` to device `d` of another process that drives it itself.
runtime_error not_addressable(const device& d, int me);

/// A device another process drives.
class peer_endpoint final : public device_endpoint {
public:
  /// `me` is this process's index, for the error's text.
  peer_endpoint(device where, int me) : device_endpoint(std::move(where)), me_(me) {}

  device_reach reach() const noexcept override { return device_reach::own_process; }
  std::vector<shard_future> execute(runtime_impl& rt, std::shared_ptr<const program> code,
                                    std::vector<shard_future> inputs) const override;
  shard_future upload(runtime_impl& rt, std::vector<std::byte> bytes, value_type type) const override;
  shard_future upload_written(runtime_impl& rt, value_type type, buffer_writer write) const override;
  future<std::vector<std::byte>> fetch(runtime_impl& rt, shard_future shard) const override;

private:
  int me_;
};

} // namespace am::detail
