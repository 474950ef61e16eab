#include "devices/detail/peer_endpoint.hpp"

#include <string>

namespace am::detail {

runtime_error not_addressable(const device& d, int me) {
  return runtime_error(to_string(d) + " belongs to process " + std::to_string(d.process_index)
                       + " and is not addressable from process " + std::to_string(me)
                       + ": each process runs work on its own devices only");
}

std::vector<shard_future> peer_endpoint::execute(runtime_impl&, std::shared_ptr<const program>,
                                                 std::vector<shard_future>) const {
  throw not_addressable(dev, me_);
}

shard_future peer_endpoint::upload(runtime_impl&, std::vector<std::byte>, value_type) const {
  throw not_addressable(dev, me_);
}

shard_future peer_endpoint::upload_written(runtime_impl&, value_type, buffer_writer) const {
  throw not_addressable(dev, me_);
}

future<std::vector<std::byte>> peer_endpoint::fetch(runtime_impl&, shard_future) const {
  throw not_addressable(dev, me_);
}

} // namespace am::detail
