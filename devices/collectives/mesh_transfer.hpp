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
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

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

// What the collectives that read their peers' memory (mesh_collectives.hpp) share with send/recv.

/// Waits until every one of `transfers` is done; otherwise lets go of each (settle) and throws
/// what ended the wait: am::timeout_error at `deadline`, am::runtime_error for an abort or UCX's
/// failure of one of them (`what` names the operation: "the <what> over shared memory ...").
void wait_for_transfers(shm_mesh& mesh, const std::vector<std::shared_ptr<shm_mesh::transfer>>& transfers,
                        shm_mesh::clock::time_point deadline, const std::string& what);

/// Whether this process may read its peers' memory: not when AM_SHM_SINGLE_COPY=0 asks for the
/// copy through the shared segments.
bool single_copy_allowed();

/// How reading another process's memory ended.
enum class read_outcome { done, not_permitted, failed };

/// Reads `bytes` at `address` of process `pid` into `data` (process_vm_readv, in slices); on
/// failure `why` says why. not_permitted: the kernel refused before any byte (EPERM, ENOSYS).
read_outcome read_from(pid_t pid, std::uint64_t address, void* data, std::size_t bytes, std::string& why);

} // namespace am::detail
