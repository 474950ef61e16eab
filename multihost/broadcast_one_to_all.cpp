#include "actormesh/multihost/detail/collect.hpp"
#include "multihost/detail/tree_agreement.hpp"
#include "multihost/detail/world_communicator.hpp"

#include "actormesh/devices/runtime.hpp"

#include <cstring>

namespace am::detail {

namespace {

/// The leaves' bytes, one after the other.
std::vector<std::byte> pack(const std::vector<host_array>& leaves) {
  std::size_t total = 0;
  for (auto& h : leaves)
    total += h.nbytes();
  std::vector<std::byte> out(total);
  std::size_t at = 0;
  for (auto& h : leaves) {
    if (h.nbytes())
      std::memcpy(out.data() + at, h.bytes().data(), h.nbytes());
    at += h.nbytes();
  }
  return out;
}

/// Leaves of the dtypes and shapes of `like`, holding `bytes` one after the other.
std::vector<host_array> unpack(const std::vector<host_array>& like, std::span<const std::byte> bytes) {
  std::vector<host_array> out;
  std::size_t at = 0;
  for (auto& h : like) {
    out.push_back(host_array::from_bytes(bytes.subspan(at, h.nbytes()), h.dtype(), h.shape()));
    at += h.nbytes();
  }
  return out;
}

} // namespace

std::vector<host_array> broadcast_leaves(const data_tree& t, std::optional<bool> is_source) {
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
  std::size_t total = 0;
  for (auto& h : host)
    total += h.nbytes();
  // A small tree goes with the agreement: every process sends it, the source's copy is kept.
  const bool small = total <= small_tree_bytes;
  std::vector<std::byte> packed, gathered;
  if (small)
    packed = pack(host);
  auto flags = small ? agree_on_small_tree(comm, "broadcast_one_to_all", tree_signature(t), source ? 1 : 0, packed,
                                           gathered)
                     : agree_on_tree(comm, "broadcast_one_to_all", tree_signature(t), source ? 1 : 0);
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
  // The source keeps its own leaves (shared, as host arrays share).
  if (total == 0 || (small && me))
    return host;
  if (small)
    return unpack(host, {gathered.data() + static_cast<std::size_t>(root) * total, total});
  if (host.size() == 1) { // one leaf: straight from and into its buffer
    host_array out = me ? host[0] : host_array::empty(host[0].shape(), host[0].dtype());
    comm.broadcast(out.bytes().data(), total, dtype::uint8, root);
    return {out};
  }
  packed = me ? pack(host) : std::vector<std::byte>(total);
  comm.broadcast(packed.data(), total, dtype::uint8, root);
  return me ? host : unpack(host, packed);
}

} // namespace am::detail
