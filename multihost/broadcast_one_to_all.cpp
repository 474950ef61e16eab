#include "multihost/detail/collect.hpp"
#include "multihost/detail/tree_agreement.hpp"
#include "multihost/detail/world_communicator.hpp"

#include "devices/runtime.hpp"

#include <cstring>

namespace am::detail {

std::vector<host_array> broadcast_leaves(const flat_tree& t, std::optional<bool> is_source) {
  std::vector<host_array> host;
  host.reserve(t.leaves.size());
  for (auto& leaf : t.leaves)
    host.push_back(leaf_on_host(leaf));
  if (process_count() == 1) {
    for (auto& h : host)
      h = h.copy();
    return host;
  }
  const bool source = is_source.value_or(process_index() == 0);
  auto& comm = world_communicator();
  auto flags = agree_on_tree(comm, "broadcast_one_to_all", tree_signature(t), source ? 1 : 0);
  std::vector<int> sources;
  for (std::size_t r = 0; r < flags.size(); ++r)
    if (flags[r] != 0)
      sources.push_back(comm.processes()[r]);
  if (sources.size() != 1) {
    std::string list;
    for (std::size_t k = 0; k < sources.size(); ++k)
      list += (k ? ", " : "") + std::to_string(sources[k]);
    throw value_error("broadcast_one_to_all: exactly one process must be the source (is_source=true), but "
                      + (sources.empty() ? std::string("none is") : "processes [" + list + "] are"));
  }
  const int root = static_cast<int>(
      std::find(comm.processes().begin(), comm.processes().end(), sources[0]) - comm.processes().begin());
  const bool me = comm.rank() == root;
  std::size_t total = 0;
  for (auto& h : host)
    total += h.nbytes();
  if (total == 0)
    return host;
  if (host.size() == 1) {
    // One leaf: straight into its own buffer (the source keeps its bytes, shared as host arrays share).
    host_array out = me ? host[0] : host_array::empty(host[0].shape(), host[0].dtype());
    comm.broadcast(out.bytes().data(), total, dtype::uint8, root);
    return {out};
  }
  std::vector<std::byte> packed(total);
  if (me) {
    std::size_t at = 0;
    for (auto& h : host) {
      if (h.nbytes())
        std::memcpy(packed.data() + at, h.bytes().data(), h.nbytes());
      at += h.nbytes();
    }
  }
  comm.broadcast(packed.data(), total, dtype::uint8, root);
  if (me)
    return host;
  std::vector<host_array> out;
  std::size_t at = 0;
  for (auto& h : host) {
    out.push_back(host_array::from_bytes({packed.data() + at, h.nbytes()}, h.dtype(), h.shape()));
    at += h.nbytes();
  }
  return out;
}

} // namespace am::detail
