/// Collectives too large to travel with their check (over operation_kind's carry_limit) among the
/// ranks of a shared-memory mesh, one copy a byte: every rank reads what it needs straight out of
/// its peers' memory (process_vm_readv), where Gloo's loopback TCP copies each byte twice through
/// the kernel. The communicator runs them on its worker after the step's fingerprints agreed
/// (so every rank issued the same operation on the same sizes). Internal.
///
/// Each is a few phases, each phase ending with one small message from every rank to every other
/// (under mesh_collective_tag): phase 0 says where a rank's buffers are (its process id, checked
/// against the one it published when the mesh formed, the addresses and the byte length, checked
/// against this rank's own); then every rank reads; the next phase's message says how its reads
/// went. No rank writes memory that a peer may still read, and none returns before every peer has
/// said it finished reading its memory, so a caller never reuses a buffer under a reader. A rank
/// that gave up (its deadline, an abort) never says so, and its peers fail. all_reduce is a
/// reduce-scatter (rank r combines block r of every rank's input, in rank order, so every rank
/// gets the same bits) then an all-gather of the combined blocks.
///
/// Where a rank may not read a peer's memory (EPERM: a container or a security module forbids it;
/// or AM_SHM_SINGLE_COPY=0), every rank learns it in the same phase, nothing has been written that
/// the operation still needs, and each returns not_permitted: the communicator then moves this and
/// every later operation through Gloo, all ranks alike.
#pragma once

#include "actormesh/actors/dtype.hpp"
#include "actormesh/devices/collectives/reduce_op.hpp"
#include "devices/collectives/shm_mesh.hpp"

#include <cstddef>
#include <cstdint>

namespace am::detail {

/// How a collective over the mesh ended when it did not throw.
enum class mesh_collective_outcome {
  done,          ///< every rank has its result
  not_permitted, ///< some rank may not read its peers' memory; no result, inputs as they were
};

// Each below: step `step` of the communicator (already checked), within `deadline`; throws
// am::timeout_error at the deadline and am::runtime_error for an abort, a peer's message that is
// not one, a read that failed (a peer's memory gone) or a peer whose read failed, naming it.

/// Every rank's `bytes` at `input` into slot r of `output` (size() * bytes); `input` may be the
/// output's own slot.
mesh_collective_outcome mesh_all_gather(shm_mesh& mesh, std::uint64_t step, const void* input, void* output,
                                        std::size_t bytes, shm_mesh::clock::time_point deadline);

/// Rank `root`'s `bytes` at `buffer` into every rank's `buffer`.
mesh_collective_outcome mesh_broadcast(shm_mesh& mesh, std::uint64_t step, void* buffer, std::size_t bytes, int root,
                                       shm_mesh::clock::time_point deadline);

/// `count` elements of `type` combined with `op` across the ranks: into every rank's `output`
/// (`whole`: all_reduce; `output` may equal `input`) or block r of split_block into rank r's
/// (reduce_scatter; `output` may overlap `input`).
mesh_collective_outcome mesh_reduce(shm_mesh& mesh, std::uint64_t step, const void* input, void* output,
                                    std::size_t count, dtype type, reduce_op op, bool whole,
                                    shm_mesh::clock::time_point deadline);

} // namespace am::detail
