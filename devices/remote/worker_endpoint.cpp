#include "devices/remote/worker_endpoint.hpp"

#include "devices/detail/runtime_impl.hpp"
#include "devices/remote/controller_link.hpp"

#include <utility>

namespace am::detail::remote {

// The link is used under a call_guard only: stop() waits for the request to be sent or refused,
// and no request starts once the runtime stops.

std::vector<shard_future> worker_endpoint::execute(runtime_impl& rt, std::shared_ptr<const program> code,
                                                   std::vector<shard_future> inputs) const {
  runtime_impl::call_guard issuing(rt);
  return link_.execute(dev, std::move(code), inputs);
}

shard_future worker_endpoint::upload(runtime_impl& rt, std::vector<std::byte> bytes, value_type type) const {
  runtime_impl::call_guard issuing(rt);
  return link_.upload(dev, std::move(bytes), std::move(type));
}

shard_future worker_endpoint::upload_written(runtime_impl& rt, value_type type, buffer_writer write) const {
  // The bytes travel to the worker: written here, into the message's own block.
  std::vector<std::byte> bytes(static_cast<std::size_t>(element_count(type.shape))
                               * static_cast<std::size_t>(size_of(type.dtype)));
  write(bytes.data(), bytes.size());
  return upload(rt, std::move(bytes), std::move(type));
}

future<std::vector<std::byte>> worker_endpoint::fetch(runtime_impl& rt, shard_future shard) const {
  runtime_impl::call_guard issuing(rt);
  return link_.fetch(dev, shard);
}

std::optional<shard_future> worker_endpoint::move_both_ends(runtime_impl& rt, const device& from,
                                                            const shard_future& value, const device& to,
                                                            const value_type& type, std::uint32_t tag) const {
  runtime_impl::call_guard issuing(rt);
  return link_.move(from, value, to, type, tag);
}

} // namespace am::detail::remote
