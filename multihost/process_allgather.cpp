#include "actormesh/multihost/detail/collect.hpp"
#include "multihost/detail/global_value.hpp"
#include "multihost/detail/tree_agreement.hpp"
#include "multihost/detail/world_communicator.hpp"

#include "actormesh/devices/runtime.hpp"

#include <cstring>

namespace am::detail {

namespace {

/// The shape of a gathered leaf: (P, *shape) stacked, (P * shape[0], ...) tiled; scalars (P,).
std::vector<std::int64_t> gathered_shape(const std::vector<std::int64_t>& shape, std::int64_t processes, bool tiled) {
  std::vector<std::int64_t> out = shape;
  if (tiled && !shape.empty())
    out[0] *= processes;
  else
    out.insert(out.begin(), processes);
  return out;
}

/// Copies every rank's part of each host leaf (rank-major in `all`, `total` bytes per rank) into
/// its gathered output.
std::vector<host_array> unpack_gathered(const data_tree& t, const std::vector<host_array>& host,
                                        const std::vector<std::byte>& all, std::size_t total, std::int64_t processes,
                                        std::vector<host_array> out) {
  std::size_t at = 0;
  for (std::size_t k = 0; k < host.size(); ++k) {
    if (is_global_non_addressable(t.leaves[k]))
      continue;
    const std::size_t n = host[k].nbytes();
    for (std::int64_t r = 0; r < processes; ++r)
      if (n)
        std::memcpy(out[k].bytes().data() + static_cast<std::size_t>(r) * n,
                    all.data() + static_cast<std::size_t>(r) * total + at, n);
    at += n;
  }
  return out;
}

} // namespace

std::vector<host_array> allgather_leaves(const data_tree& t, bool tiled) {
  // Refused before any communication: every process has the same tree, so all refuse alike.
  if (!tiled)
    for (auto& leaf : t.leaves)
      if (is_global_non_addressable(leaf))
        throw value_error("Gathering global non-fully-addressable arrays only supports tiled=True");
  const std::int64_t processes = process_count();
  std::vector<host_array> out(t.leaves.size());
  std::vector<host_array> host(t.leaves.size());
  std::size_t total = 0;
  for (std::size_t k = 0; k < t.leaves.size(); ++k)
    if (!is_global_non_addressable(t.leaves[k])) {
      host[k] = leaf_on_host(t.leaves[k]);
      total += host[k].nbytes();
    }
  if (processes == 1) {
    for (std::size_t k = 0; k < host.size(); ++k)
      out[k] = host[k].copy().reshape(gathered_shape(host[k].shape(), 1, tiled));
    return out;
  }
  auto& comm = world_communicator();
  // A small host part goes with the agreement; a large one follows it in its own all-gather.
  const bool small = total <= small_tree_bytes;
  std::vector<std::byte> mine, all;
  if (small) {
    mine.reserve(total);
    for (std::size_t k = 0; k < host.size(); ++k)
      if (!is_global_non_addressable(t.leaves[k]))
        mine.insert(mine.end(), host[k].bytes().begin(), host[k].bytes().end());
    agree_on_small_tree(comm, "process_allgather", tree_signature(t), 0, mine, all);
  } else {
    agree_on_tree(comm, "process_allgather", tree_signature(t), 0);
  }
  for (std::size_t k = 0; k < t.leaves.size(); ++k)
    if (is_global_non_addressable(t.leaves[k]))
      out[k] = gather_global_value(comm, std::get<array>(t.leaves[k]));
  std::size_t host_leaves = 0, last = 0;
  for (std::size_t k = 0; k < t.leaves.size(); ++k)
    if (!is_global_non_addressable(t.leaves[k])) {
      ++host_leaves;
      last = k;
      out[k] = host_array::empty(gathered_shape(host[k].shape(), processes, tiled), host[k].dtype());
    }
  if (total == 0)
    return out;
  if (small)
    return unpack_gathered(t, host, all, total, processes, std::move(out));
  if (host_leaves == 1) { // straight into the output: rank-major is both the stacked and the tiled layout
    comm.all_gather(host[last].bytes().data(), out[last].bytes().data(), total, dtype::uint8);
    return out;
  }
  mine.resize(total);
  all.resize(total * static_cast<std::size_t>(processes));
  std::size_t at = 0;
  for (std::size_t k = 0; k < host.size(); ++k)
    if (!is_global_non_addressable(t.leaves[k]) && host[k].nbytes()) {
      std::memcpy(mine.data() + at, host[k].bytes().data(), host[k].nbytes());
      at += host[k].nbytes();
    }
  comm.all_gather(mine.data(), all.data(), total, dtype::uint8);
  return unpack_gathered(t, host, all, total, processes, std::move(out));
}

} // namespace am::detail
