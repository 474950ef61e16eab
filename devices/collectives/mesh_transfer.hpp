/// A send/recv's bytes between two ranks of a shared-memory mesh (shm_mesh.hpp): straight from the
/// sender's memory into the receiver's, one copy (UCX's rendezvous: the receiver reads the sender's
/// pages), where Gloo's loopback TCP makes two through the kernel. The communicator moves a
/// send/recv this way when its ranks share the machine, after the pair's fingerprints agreed.
/// Internal.
#pragma once

#include "devices/collectives/shm_mesh.hpp"

#include <cstddef>
#include <cstdint>

namespace am::detail {

/// Sends the `bytes` at `data` to rank `peer` as step `step` of `lane`, then a release note that
/// says the memory stayed as it was until the receiver had read it: a receiver trusts the bytes
/// only with the note, so a sender that gave up (its deadline, an abort) and whose caller reused
/// the memory cannot hand over changed bytes as good ones. Returns once the receiver has read
/// them. Throws am::timeout_error at `deadline` and am::runtime_error when the mesh is aborted or
/// UCX fails; either way only after UCX has let go of `data` (shm_mesh::settle).
void mesh_send(shm_mesh& mesh, int peer, std::uint8_t lane, std::uint64_t step, const void* data, std::size_t bytes,
               shm_mesh::clock::time_point deadline);

/// Receives the `bytes` that rank `peer` sends as step `step` of `lane` into `data`, and the
/// sender's release note. A message of another length fails. Errors as mesh_send's; the memory is
/// not written after it returns or throws.
void mesh_recv(shm_mesh& mesh, int peer, std::uint8_t lane, std::uint64_t step, void* data, std::size_t bytes,
               shm_mesh::clock::time_point deadline);

} // namespace am::detail
