#include "devices/transfers.hpp"

#include "devices/collectives/shard_transfers.hpp"
#include "devices/detail/device_endpoint.hpp"
#include "devices/detail/runtime_impl.hpp"

namespace am::detail {

shard_future move_shard(runtime_context& context, const device& from, const shard_future& value, const device& to,
                        const value_type& type, std::uint32_t tag) {
  auto& rt = impl_of(context);
  auto& source = rt.endpoint(from.id);
  auto& target = rt.endpoint(to.id);
  // An end driven from here through another process orders both ends itself.
  for (auto* end : {&source, &target})
    if (auto moved = end->move_both_ends(rt, from, value, to, type, tag))
      return *moved;
  // Otherwise the producer's process sends and the consumer's receives; the others do nothing.
  if (source.reach() == device_reach::here)
    shard_transfers::of(rt)->send(from, value, to.process_index, tag);
  else if (target.reach() == device_reach::here)
    return shard_transfers::of(rt)->receive(from.process_index, to, type, tag);
  return {};
}

} // namespace am::detail
