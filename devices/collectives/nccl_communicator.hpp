/// Collectives on CUDA device memory: an NCCL communicator over a list of CUDA devices of the
/// cluster, one NCCL rank per device, several of them in one process when it has several GPUs (a
/// call then drives all of them in one NCCL group). The unique id goes through the cluster's store;
/// every operation is numbered and checked by its participants against each other's fingerprint
/// over a host communicator among them (detail::device_step_checks; the mesh supervisor sees only
/// that communicator's creation), as a host communicator's are: a disagreement is
/// am::desync_error on every participant, naming who issued what. Waits poll the streams and NCCL's
/// asynchronous errors, bounded by a timeout; on an error, a timeout or a failed participant the
/// communicator aborts (ncclCommAbort) and is broken from then on. doc/architecture.md,
/// "Collectives engine". Compiled with CUDA and NCCL; `nccl_available()` says whether this build
/// has it (the constructor throws am::runtime_error otherwise).
#pragma once

#include "actormesh/actors/device_info.hpp"
#include "actormesh/actors/dtype.hpp"
#include "actormesh/devices/collectives/reduce_op.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace am {

namespace detail {
class cluster_services;
} // namespace detail

/// True when this build has NCCL (CUDA on and NCCL found at build time).
bool nccl_available() noexcept;

/// One local rank's part of an operation: its device buffers and the CUDA stream to run on.
struct nccl_buffers {
  const void* input = nullptr; ///< device memory of the rank's device
  void* output = nullptr;      ///< device memory; may equal input where the operation allows it
  void* stream = nullptr;      ///< a cudaStream_t of the rank's device; null: the default stream
};

/// One process's ranks of an NCCL communicator. Thread-safe; operations block the calling thread
/// until the bytes have moved (never call one from an actor's handler).
class nccl_communicator {
public:
  using timeout_type = std::optional<std::chrono::milliseconds>;

  /// Joins communicator `name` over `devices` (CUDA devices of the cluster; rank r is devices[r]).
  /// Every process owning one of them constructs it with the same name and list; its ranks are its
  /// own devices in the list. Names are single-use, as for am::communicator. `timeout` bounds the
  /// creation and is the default of every operation. The checks' host communicator binds its
  /// connections to `bind_address` (the cluster's data-plane interface).
  nccl_communicator(detail::cluster_services& cluster, std::vector<device> devices, std::string name,
                    std::chrono::milliseconds timeout = std::chrono::seconds(60),
                    const std::string& bind_address = "127.0.0.1");

  /// Finalizes and destroys the NCCL communicators (aborts them when broken or when finalizing
  /// does not finish within the timeout).
  ~nccl_communicator();

  nccl_communicator(const nccl_communicator&) = delete;
  nccl_communicator& operator=(const nccl_communicator&) = delete;

  /// Number of ranks (devices).
  int size() const noexcept;

  /// This process's ranks, in order; every operation takes one nccl_buffers per local rank in
  /// this order.
  const std::vector<int>& local_ranks() const noexcept;

  /// True once an operation failed; every later call throws am::runtime_error.
  bool broken() const noexcept;

  /// Every rank's `count` elements combined with `op` (reduce_op's rules; mean through ncclAvg).
  void all_reduce(const std::vector<nccl_buffers>& local, std::size_t count, dtype type, reduce_op op,
                  timeout_type timeout = {});

  /// Every rank's `count` elements concatenated in rank order into each output (size() * count).
  void all_gather(const std::vector<nccl_buffers>& local, std::size_t count, dtype type, timeout_type timeout = {});

  /// `count` elements combined with `op`, split as split_block(count, size(), r): rank r receives
  /// block r (uneven blocks go through one ncclReduce per block in one group).
  void reduce_scatter(const std::vector<nccl_buffers>& local, std::size_t count, dtype type, reduce_op op,
                      timeout_type timeout = {});

  /// Rank `root`'s `count` elements into every rank's output.
  void broadcast(const std::vector<nccl_buffers>& local, std::size_t count, dtype type, int root,
                 timeout_type timeout = {});

  /// Block exchange of size() equal blocks (count divisible by size()): block j of rank i's input
  /// becomes block i of rank j's output.
  void all_to_all(const std::vector<nccl_buffers>& local, std::size_t count, dtype type, timeout_type timeout = {});

  /// pmap's ppermute over the ranks: for each (source, destination) of `pairs` (ranks; no rank
  /// twice as a source nor twice as a destination), the destination's output receives the
  /// source's `count` input elements; an output that no pair names is zeros. One numbered step of
  /// the communicator (the pairs are part of what the participants check), its sends and receives
  /// in one NCCL group so that rings cannot deadlock; a rank paired with itself copies on its stream.
  void permute(const std::vector<nccl_buffers>& local, std::size_t count, dtype type,
               const std::vector<std::pair<int, int>>& pairs, timeout_type timeout = {});

  /// Local rank `from` sends `count` elements of its `input` to rank `to`; issued by the process
  /// of `from`. Sends and receives between a pair of ranks match in order.
  void send(int from, const nccl_buffers& buffers, std::size_t count, dtype type, int to, timeout_type timeout = {});

  /// Local rank `to` receives into its `output` what rank `from` sends.
  void recv(int to, const nccl_buffers& buffers, std::size_t count, dtype type, int from, timeout_type timeout = {});

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace am
