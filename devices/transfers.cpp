#include "devices/transfers.hpp"

#include "devices/collectives/shard_transfers.hpp"
#include "devices/detail/runtime_impl.hpp"
#include "devices/remote/controller_link.hpp"

namespace am::detail {

shard_future move_shard(runtime_context& context, const device& from, const shard_future& value, const device& to,
                        const value_type& type, std::uint32_t tag) {
  auto& rt = impl_of(context);
  if (auto* workers = rt.workers())
    return workers->move(from, value, to, type, tag);
  const int me = rt.process_index();
  if (from.process_index == me)
    shard_transfers::of(rt)->send(from, value, to.process_index, tag);
  else if (to.process_index == me)
    return shard_transfers::of(rt)->receive(from.process_index, to, type, tag);
  return {};
}

} // namespace am::detail
