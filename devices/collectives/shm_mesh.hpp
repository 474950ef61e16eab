/// The processes of one communicator that all run on this machine, connected over shared memory
/// through UCX (one copy between processes, no socket, no port to listen on), driven by the thread
/// that waits: no transport thread of its own. The communicator checks each collective's
/// fingerprints over it (fingerprint_dissemination.hpp); communicators whose processes span
/// machines keep Gloo's authenticated TCP for that (doc/architecture.md, "Collectives engine").
/// Internal.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <sys/types.h>
#include <vector>

namespace am::detail {

class cluster_services;

/// One rank's end of a full mesh of UCX endpoints over shared memory. Messages are tagged (64 bits,
/// matched under a mask); sends and receives never block; wait() progresses the mesh on the calling
/// thread, spinning briefly and then sleeping on UCX's event descriptor until something arrives.
/// One thread at a time uses it; abort() may come from any thread.
class shm_mesh {
public:
  using clock = std::chrono::steady_clock;

  /// A message on its way out or in. Filled by the mesh; read by its owner once done.
  struct transfer {
    std::vector<std::byte> bytes; ///< what is sent, or room for what arrives
    bool done = false;            ///< completed (successfully or not)
    bool failed = false;          ///< completed with an error (or cancelled)
    std::string error;            ///< UCX's status text when failed
    std::size_t length = 0;       ///< bytes that arrived (receives)
    std::uint64_t tag = 0;        ///< the sender's tag (receives)
    int peer = -1;                ///< the rank it goes to (sends)
    void* request = nullptr;      ///< UCX's request while in flight
  };

  /// Connects rank `rank` of `size` with every other rank when UCX is here and every rank runs
  /// on this machine (same kernel, IPC and PID namespaces); otherwise returns null, and every
  /// rank returns null alike, since each decides from what all ranks published in the cluster's
  /// store under `store_prefix`. AM_COLLECTIVE_CHECKS=tcp in any rank's environment makes all of
  /// them keep to TCP (the tests of the path between machines use it). Throws the store's errors
  /// when a rank does not publish before `deadline`.
  static std::unique_ptr<shm_mesh> connect(cluster_services& cluster, const std::string& store_prefix, int rank,
                                           int size, clock::time_point deadline);

  ~shm_mesh();
  shm_mesh(const shm_mesh&) = delete;
  shm_mesh& operator=(const shm_mesh&) = delete;

  int rank() const noexcept { return rank_; }

  /// The process id that rank `rank` published when the mesh formed (the ranks share the PID
  /// namespace): what a send/recv's reader checks a descriptor against (mesh_transfer.cpp).
  pid_t pid_of(int rank) const;
  int size() const noexcept { return size_; }

  /// Sends `bytes` to rank `peer` under `tag`. The transfer owns the bytes until it is done.
  std::shared_ptr<transfer> send(int peer, std::uint64_t tag, std::vector<std::byte> bytes);

  /// Receives one message whose tag matches `tag` on the bits of `mask`, of at most `capacity` bytes
  /// (a longer one fails the transfer).
  std::shared_ptr<transfer> receive(std::uint64_t tag, std::uint64_t mask, std::size_t capacity);

  /// Sends the `size` bytes at `data`, the caller's memory, not copied up front: this rank's
  /// progress calls copy them into the shared segments, so the memory must stay as it is until the
  /// transfer is done or settle() let it go. For a send/recv's bytes when the receiver may not
  /// read them itself (mesh_transfer.hpp).
  std::shared_ptr<transfer> send_from(int peer, std::uint64_t tag, const void* data, std::size_t size);

  /// Receives one message whose tag matches `tag` on the bits of `mask` straight into `data`, the
  /// caller's memory (at most `capacity` bytes; a longer message fails the transfer). The bytes are
  /// written only while this rank progresses the mesh (every message is eager: connect() turns
  /// UCX's rendezvous off).
  std::shared_ptr<transfer> receive_into(std::uint64_t tag, std::uint64_t mask, void* data, std::size_t capacity);

  /// Withdraws a receive that has not matched (it completes as failed).
  void cancel(const std::shared_ptr<transfer>& t);

  /// Lets go of the caller's memory behind a transfer that did not complete (its owner gives up):
  /// cancels it (a receive) and progresses until UCX is done with it, for at most `limit` (a send,
  /// which UCX cannot cancel, for at most 100 ms). True when it is done. Otherwise the mesh is
  /// aborted and never progressed again (its UCX worker is left, not destroyed, when it ends), so
  /// nothing touches that memory later; false. (Only this rank's progress calls copy a transfer's
  /// bytes: connect() turns UCX's rendezvous off.)
  bool settle(const std::shared_ptr<transfer>& t, clock::duration limit) noexcept;

  /// Why wait() returned.
  enum class wake { ready, timed_out, aborted };

  /// Progresses the mesh until `ready()` holds, `until` passes, or the mesh is aborted.
  wake wait(const std::function<bool()>& ready, clock::time_point until);

  /// Ends every wait in progress and every later one with wake::aborted. Thread-safe, idempotent.
  void abort(const std::string& reason) noexcept;

  /// The first abort's reason ("" while not aborted).
  std::string abort_reason() const;

  struct state; // UCX's objects (shm_mesh.cpp)

private:
  shm_mesh(std::unique_ptr<state> s, int rank, int size);

  /// Progresses once; true when UCX did something.
  bool progress();

  /// Starts a send of `size` bytes at `data` whose buffer `t` keeps alive (or not: the caller's).
  std::shared_ptr<transfer> start_send(std::shared_ptr<transfer> t, int peer, std::uint64_t tag, const void* data,
                                       std::size_t size);

  /// Starts a receive into `data` (t->bytes or the caller's memory).
  std::shared_ptr<transfer> start_receive(std::shared_ptr<transfer> t, std::uint64_t tag, std::uint64_t mask,
                                          void* data, std::size_t capacity);

  std::unique_ptr<state> state_;
  int rank_;
  int size_;
  std::atomic<bool> aborted_{false};
  mutable std::mutex reason_mutex_;
  std::string reason_;
};

} // namespace am::detail
