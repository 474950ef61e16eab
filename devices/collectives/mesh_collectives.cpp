#include "devices/collectives/mesh_collectives.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/collectives/block_split.hpp"
#include "devices/collectives/fingerprint_dissemination.hpp"
#include "devices/collectives/mesh_transfer.hpp"
#include "devices/collectives/reduce_kernels.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace am::detail {

namespace {

using transfer_ptr = std::shared_ptr<shm_mesh::transfer>;
using words = std::vector<std::uint64_t>;
using deadline_type = shm_mesh::clock::time_point;

constexpr std::uint64_t every_tag_bit = ~std::uint64_t{0};
constexpr std::uint8_t collectives_lane = 0;

/// What a rank says of its reads.
constexpr std::uint64_t reads_done = 1, reads_not_permitted = 2, reads_failed = 3;

/// The bytes of each rank's part that one pass of a reduction reads and combines (the pass's
/// blocks stay in the cache while they are combined).
constexpr std::size_t reduce_chunk_bytes = 256 * 1024;

/// memcpy that takes an empty range whose pointers may be null (an empty block's vector has none).
void copy_unless_empty(void* to, const void* from, std::size_t bytes) {
  if (bytes != 0)
    std::memcpy(to, from, bytes);
}

std::uint64_t address_of(const void* p) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p)); }

/// Sends `mine` to every other rank as phase `phase` of step `step` and returns every rank's words
/// (this rank's own at its place). A message of another length fails, naming the rank.
std::vector<words> exchange(shm_mesh& mesh, std::uint64_t step, unsigned phase, const words& mine,
                            deadline_type deadline, const std::string& what) {
  const int n = mesh.size(), me = mesh.rank();
  const std::size_t bytes = mine.size() * sizeof(std::uint64_t);
  std::vector<transfer_ptr> transfers;
  std::vector<transfer_ptr> receives(static_cast<std::size_t>(n));
  for (int q = 0; q < n; ++q)
    if (q != me) {
      receives[static_cast<std::size_t>(q)] =
        mesh.receive(mesh_collective_tag(phase, collectives_lane, step, q), every_tag_bit, bytes);
      transfers.push_back(receives[static_cast<std::size_t>(q)]);
    }
  std::vector<std::byte> message(bytes);
  std::memcpy(message.data(), mine.data(), bytes);
  for (int q = 0; q < n; ++q)
    if (q != me)
      transfers.push_back(mesh.send(q, mesh_collective_tag(phase, collectives_lane, step, me), message));
  wait_for_transfers(mesh, transfers, deadline, what);
  std::vector<words> out(static_cast<std::size_t>(n), words(mine.size()));
  out[static_cast<std::size_t>(me)] = mine;
  for (int q = 0; q < n; ++q) {
    if (q == me)
      continue;
    auto& r = *receives[static_cast<std::size_t>(q)];
    if (r.length != bytes)
      throw runtime_error("the " + what + " over shared memory got a message of " + std::to_string(r.length)
                          + " bytes from rank " + std::to_string(q) + " where " + std::to_string(bytes)
                          + " were expected");
    std::memcpy(out[static_cast<std::size_t>(q)].data(), r.bytes.data(), bytes);
  }
  return out;
}

/// Phase 0: where every rank's buffers are ({pid, input, output, bytes}), each checked against
/// the process id the rank published and this rank's own length (`expected_bytes`).
std::vector<words> exchange_buffers(shm_mesh& mesh, std::uint64_t step, const void* input, const void* output,
                                    std::size_t expected_bytes, deadline_type deadline, const std::string& what) {
  auto all = exchange(mesh, step, 0,
                      {static_cast<std::uint64_t>(::getpid()), address_of(input), address_of(output), expected_bytes},
                      deadline, what);
  for (int q = 0; q < mesh.size(); ++q) {
    if (q == mesh.rank())
      continue;
    const auto& w = all[static_cast<std::size_t>(q)];
    if (w[0] != static_cast<std::uint64_t>(mesh.pid_of(q)))
      throw runtime_error("the " + what + " over shared memory: rank " + std::to_string(q) + " names process id "
                          + std::to_string(w[0]) + ", not its own " + std::to_string(mesh.pid_of(q)));
    if (w[3] != expected_bytes)
      throw runtime_error("the " + what + " over shared memory: rank " + std::to_string(q) + " has "
                          + std::to_string(w[3]) + " bytes where " + std::to_string(expected_bytes)
                          + " were expected");
  }
  return all;
}

/// This rank's reads so far: done until one is refused or fails (then `why` says why).
struct read_state {
  std::uint64_t status = reads_done;
  std::string why;

  /// Reads `bytes` at `address` of rank `q` (process `pid`) into `data`, unless an earlier read
  /// went wrong.
  void read(pid_t pid, int q, std::uint64_t address, void* data, std::size_t bytes) {
    if (status != reads_done || bytes == 0)
      return;
    if (!single_copy_allowed()) {
      status = reads_not_permitted;
      return;
    }
    std::string text;
    const auto outcome = read_from(pid, address, data, bytes, text);
    if (outcome == read_outcome::not_permitted)
      status = reads_not_permitted;
    else if (outcome == read_outcome::failed) {
      status = reads_failed;
      why = "could not read rank " + std::to_string(q) + "'s memory (" + text + ")";
    }
  }
};

/// The phase after the reads: says how this rank's went (with `extra`, an address its peers read
/// next) and learns how every rank's went. Throws when a rank's read failed; not_permitted when
/// any was refused.
mesh_collective_outcome settle_reads(shm_mesh& mesh, std::uint64_t step, unsigned phase, const read_state& mine,
                                     std::uint64_t extra, std::vector<words>& all, deadline_type deadline,
                                     const std::string& what) {
  all = exchange(mesh, step, phase, {mine.status, extra}, deadline, what);
  if (mine.status == reads_failed)
    throw runtime_error("the " + what + " over shared memory " + mine.why);
  bool refused = false;
  for (int q = 0; q < mesh.size(); ++q) {
    const auto status = all[static_cast<std::size_t>(q)][0];
    if (status == reads_failed)
      throw runtime_error("the " + what + " over shared memory failed: rank " + std::to_string(q)
                          + " could not read its peers' memory");
    if (status == reads_not_permitted)
      refused = true;
    else if (status != reads_done)
      throw runtime_error("the " + what + " over shared memory got status " + std::to_string(status) + " from rank "
                          + std::to_string(q));
  }
  return refused ? mesh_collective_outcome::not_permitted : mesh_collective_outcome::done;
}

} // namespace

mesh_collective_outcome mesh_all_gather(shm_mesh& mesh, std::uint64_t step, const void* input, void* output,
                                        std::size_t bytes, deadline_type deadline) {
  const std::string what = "all_gather";
  auto where = exchange_buffers(mesh, step, input, output, bytes, deadline, what);
  auto* out = static_cast<std::byte*>(output);
  const int me = mesh.rank();
  read_state reads;
  for (int q = 0; q < mesh.size(); ++q)
    if (q != me)
      reads.read(mesh.pid_of(q), q, where[static_cast<std::size_t>(q)][1], out + static_cast<std::size_t>(q) * bytes,
                 bytes);
  auto* own_slot = out + static_cast<std::size_t>(me) * bytes;
  if (own_slot != input)
    std::memmove(own_slot, input, bytes);
  std::vector<words> said;
  return settle_reads(mesh, step, 1, reads, 0, said, deadline, what);
}

mesh_collective_outcome mesh_broadcast(shm_mesh& mesh, std::uint64_t step, void* buffer, std::size_t bytes, int root,
                                       deadline_type deadline) {
  const std::string what = "broadcast";
  auto where = exchange_buffers(mesh, step, buffer, buffer, bytes, deadline, what);
  read_state reads;
  if (mesh.rank() != root)
    reads.read(mesh.pid_of(root), root, where[static_cast<std::size_t>(root)][1], buffer, bytes);
  std::vector<words> said;
  return settle_reads(mesh, step, 1, reads, 0, said, deadline, what);
}

mesh_collective_outcome mesh_reduce(shm_mesh& mesh, std::uint64_t step, const void* input, void* output,
                                    std::size_t count, dtype type, reduce_op op, bool whole,
                                    deadline_type deadline) {
  const std::string what = whole ? "all_reduce" : "reduce_scatter";
  const std::size_t element = size_of(type);
  const int n = mesh.size(), me = mesh.rank();
  auto where = exchange_buffers(mesh, step, input, output, count * element, deadline, what);
  // Phase 1: this rank combines block `me` of every rank's input, a chunk at a time, in rank order.
  const auto mine = split_block(count, n, me);
  std::vector<std::byte> combined(mine.count * element);
  const std::size_t chunk = std::max<std::size_t>(1, reduce_chunk_bytes / element);
  std::vector<std::byte> blocks(static_cast<std::size_t>(n) * std::min(chunk, std::max<std::size_t>(mine.count, 1))
                                * element);
  read_state reads;
  for (std::size_t at = 0; at < mine.count && reads.status == reads_done; at += chunk) {
    const std::size_t take = std::min(chunk, mine.count - at);
    const std::size_t offset = (mine.offset + at) * element, length = take * element;
    for (int q = 0; q < n; ++q) {
      auto* slot = blocks.data() + static_cast<std::size_t>(q) * length;
      if (q == me)
        copy_unless_empty(slot, static_cast<const std::byte*>(input) + offset, length);
      else
        reads.read(mesh.pid_of(q), q, where[static_cast<std::size_t>(q)][1] + offset, slot, length);
    }
    if (reads.status == reads_done)
      reduce_blocks(type, op, blocks.data(), n, take, combined.data() + at * element);
  }
  // Every rank has read every input it needed: outputs may be written from here on.
  std::vector<words> said;
  auto outcome = settle_reads(mesh, step, 1, reads, address_of(combined.data()), said, deadline, what);
  if (outcome != mesh_collective_outcome::done)
    return outcome;
  auto* out = static_cast<std::byte*>(output);
  if (!whole) {
    copy_unless_empty(out, combined.data(), combined.size());
    return outcome;
  }
  // Phase 2: every other rank's combined block, read out of its memory.
  read_state gathered;
  for (int q = 0; q < n; ++q) {
    const auto theirs = split_block(count, n, q);
    if (q != me)
      gathered.read(mesh.pid_of(q), q, said[static_cast<std::size_t>(q)][1], out + theirs.offset * element,
                    theirs.count * element);
  }
  copy_unless_empty(out + mine.offset * element, combined.data(), combined.size());
  if (gathered.status == reads_not_permitted) { // refused after the first reads were allowed: the output is partial
    gathered.status = reads_failed;
    gathered.why = "was refused the second reads after the first were allowed";
  }
  // No rank returns (and frees `combined`) before every peer has read it.
  if (settle_reads(mesh, step, 2, gathered, 0, said, deadline, what) != mesh_collective_outcome::done)
    throw runtime_error("the all_reduce over shared memory: a rank was refused the second reads");
  return outcome;
}

} // namespace am::detail
