/// A send/recv's bytes between two ranks of a shared-memory mesh (shm_mesh.hpp), one copy: the
/// receiver reads them out of the sender's memory itself (process_vm_readv; the ranks share the
/// machine and the PID namespace), where Gloo's loopback TCP copies twice through the kernel. The
/// communicator moves a send/recv this way when its ranks share the machine, after the pair's
/// fingerprints agreed. Internal.
///
/// The messages, each under a tag of its own (point_to_point_message): the sender sends a
/// descriptor (its process id, the address, the length) and waits; the receiver checks it (the
/// process id the sender published when the mesh formed, the length it expects), reads the bytes
/// and replies "read"; the sender then sends a release note, which says that its memory stayed as
/// it was until the reply came. The receiver accepts the bytes only with that note: a sender that
/// gave up (its deadline, an abort) and whose caller reused the memory meanwhile cannot hand over
/// changed bytes as good ones. When the receiver may not read the sender's memory (EPERM: a
/// container or a security module forbids it; or AM_SHM_SINGLE_COPY=0), it replies "copy" instead
/// and the sender sends the bytes through the mesh's shared segments (two copies, as MPI's shared
/// memory without cross-memory attach). A sender that died, or whose memory is gone, fails the
/// read with a named error, never a crash.
#pragma once

#include "devices/collectives/shm_mesh.hpp"

#include <cstddef>
#include <cstdint>

namespace am::detail {

/// Sends the `bytes` at `data` to rank `peer` as step `step` of `lane` (see above). Returns once
/// the receiver has them. Throws am::timeout_error at `deadline` and am::runtime_error when the
/// mesh is aborted, the receiver answers nonsense or UCX fails; `data` is not touched after.
void mesh_send(shm_mesh& mesh, int peer, std::uint8_t lane, std::uint64_t step, const void* data, std::size_t bytes,
               shm_mesh::clock::time_point deadline);

/// Receives the `bytes` that rank `peer` sends as step `step` of `lane` into `data` (see above).
/// A descriptor of another length or from another process fails, naming what it said. Errors as
/// mesh_send's, and am::runtime_error naming the sender when its memory cannot be read; `data` is
/// not written after it returns or throws.
void mesh_recv(shm_mesh& mesh, int peer, std::uint8_t lane, std::uint64_t step, void* data, std::size_t bytes,
               shm_mesh::clock::time_point deadline);

} // namespace am::detail
