/// Collectives across processes on host memory: a communicator is a group of processes of the
/// cluster, one rank each, whose bytes move through Gloo over TCP; every operation is numbered and
/// checked by its participants against each other (the cluster, the mesh supervisor, checks only
/// creation). doc/architecture.md, "Collectives engine".
#ifndef ACTORMESH_DEVICES_COLLECTIVES_COMMUNICATOR_HPP
#define ACTORMESH_DEVICES_COLLECTIVES_COMMUNICATOR_HPP

#include "actormesh/actors/dtype.hpp"
#include "actormesh/devices/collectives/block_split.hpp"
#include "actormesh/devices/collectives/reduce_op.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace am {

namespace detail {
class cluster_services;
} // namespace detail

/// One rank of a group of processes that run collectives together on host buffers.
///
/// Created collectively: every process of `processes` constructs one with the same name and list,
/// and its rank is its position in the list. Every operation is collective over the communicator
/// (send/recv over its two ranks) and must be issued in the same order everywhere: each one is
/// numbered (step k of this communicator), checked against every other participant's k-th, whose
/// fingerprint comes ahead of its bytes (a disagreement raises am::desync_error on every
/// participant, naming who issued what), then its bytes move through Gloo on the communicator's own
/// worker thread while the caller waits.
///
/// Errors of an operation: am::timeout_error when it does not complete in time (naming the
/// processes that never issued it when that is known), am::process_failure_error when a
/// participant died or stopped answering, am::desync_error, am::runtime_error for a transport
/// failure; each message names the operation, its step and the communicator. Such a failure
/// leaves the communicator broken: every later call throws am::runtime_error at once. Bad
/// arguments (am::value_error, am::type_error) are refused before the operation is numbered,
/// so they leave the communicator usable (every participant refuses the same call alike).
///
/// Buffers are host memory of `count` elements of `type`; `input` and `output` may be the same
/// pointer where noted. Calls block the calling thread (never call one from an actor's handler);
/// calls from several threads are numbered in the order they arrive.
class communicator {
public:
  /// Timeout of one operation; empty means the communicator's default (its constructor's).
  using timeout_type = std::optional<std::chrono::milliseconds>;

  /// Joins the communicator `name` over `processes` (sorted process indices of `cluster`, this
  /// process among them), binding the TCP transport to `bind_address` (an address of one local
  /// interface; loopback unless given). `timeout` bounds the creation and is the default of every
  /// operation. Blocks until every participant has joined.
  ///
  /// Names are single-use within a cluster: their rendezvous keys and the supervisor's sequence
  /// of steps belong to one communicator, so a name this process already used is refused with
  /// am::value_error (add a counter to recreate one). Names are 1 to 200 printable characters
  /// without '/'. Throws am::value_error for a bad list, name or address, and the errors of an
  /// operation when the participants do not all join in time or disagree on the list.
  communicator(detail::cluster_services& cluster, std::vector<int> processes, std::string name,
               std::string bind_address = "127.0.0.1",
               std::chrono::milliseconds timeout = std::chrono::seconds(60));

  /// Leaves the communicator; waits for an operation still running on its worker (bounded by that
  /// operation's timeout). A broken communicator also closes its connections at once, so peers
  /// still waiting on it fail promptly.
  ~communicator();

  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;

  /// The name every participant gave.
  const std::string& name() const noexcept;

  /// This process's rank: its position in processes().
  int rank() const noexcept;

  /// The number of ranks.
  int size() const noexcept;

  /// The participating process indices, sorted; rank r is processes()[r].
  const std::vector<int>& processes() const noexcept;

  /// The default timeout of operations.
  std::chrono::milliseconds timeout() const noexcept;

  /// The number of collectives issued so far (the next one is step steps() + 1; creation is step 0;
  /// send/recv count separately, per ordered pair of ranks).
  std::uint64_t steps() const noexcept;

  /// True once an operation failed; then every call throws am::runtime_error at once.
  bool broken() const noexcept;

  /// Why the communicator broke (empty while it works).
  std::string broken_reason() const;

  /// Every rank's `count` elements combined with `op`; every rank receives the result.
  /// `input` may equal `output` (they must not otherwise overlap). Mean needs a floating dtype and
  /// bool has no sum (see reduce_op).
  void all_reduce(const void* input, void* output, std::size_t count, dtype type, reduce_op op,
                  timeout_type timeout = {});

  /// Every rank's `count` elements, concatenated in rank order into `output` (size() * count
  /// elements). `input` may be `output`'s own slot (output + rank() * count elements); it must not
  /// otherwise overlap `output`.
  void all_gather(const void* input, void* output, std::size_t count, dtype type, timeout_type timeout = {});

  /// The `count` elements of every rank combined with `op`, split into size() blocks as
  /// split_block(count, size(), r) does (numpy.array_split: any count, the first count % size()
  /// blocks one element longer); rank r receives block r in `output`
  /// (split_block(count, size(), rank()).count elements). `output` may overlap `input` (it is
  /// written after this rank's input has been sent).
  void reduce_scatter(const void* input, void* output, std::size_t count, dtype type, reduce_op op,
                      timeout_type timeout = {});

  /// Rank `root`'s `count` elements copied into `buffer` on every rank.
  void broadcast(void* buffer, std::size_t count, dtype type, int root, timeout_type timeout = {});

  /// Block exchange: `input` and `output` hold `count` elements in size() equal blocks (count must
  /// be divisible by size(), as in JAX's all_to_all); block j of `input` goes to rank j, and
  /// block i of `output` comes from rank i. `input` must not overlap `output`.
  void all_to_all(const void* input, void* output, std::size_t count, dtype type, timeout_type timeout = {});

  /// Waits until every rank has called barrier with the same `name` as this collective step (a
  /// different name, or another collective, at the same step is a desync). No bytes move beyond
  /// the step's check, which every rank passes only once every other rank has arrived.
  void barrier(const std::string& name, timeout_type timeout = {});

  /// Checks, as this collective step and without moving a byte, that every rank issued the same
  /// `signature` (pmap's call, say): a difference raises am::desync_error on every rank, naming
  /// who issued what ("<label> differs between processes (desync): process 0 issued ..."), a
  /// rank that never issues it am::timeout_error naming it ("<label> timed out after ...").
  /// `label` must not be empty. barrier(name) is agree("Barrier 'name'", "barrier 'name'").
  void agree(const std::string& label, const std::string& signature, timeout_type timeout = {});

  /// Checks, as the next step of the send/recv sequence from rank `from` to rank `to` (this rank
  /// one of the two, `from` != `to`), that both ends issued the same `signature`, moving no byte:
  /// what agree is to all ranks, for a pair. A device communicator whose bytes move elsewhere
  /// (NCCL's point-to-point calls) checks its pairs' steps with it. A difference raises
  /// am::desync_error on both ends ("<label> differs between processes (desync): ..."), an end
  /// that never issues it am::timeout_error naming it. The step counts in the pair's sequence, as
  /// a send or recv between them does; `label` must not be empty.
  void agree_pair(int from, int to, const std::string& label, const std::string& signature,
                  timeout_type timeout = {});

  /// Sends `count` elements to rank `peer`, which receives them with recv(..., rank(), tag).
  /// Returns once the peer's matching recv has taken the data, so two ranks that send to each
  /// other must order their calls (one sends first) or use all_to_all. Sends of one tag from one
  /// rank to another arrive in order.
  void send(const void* data, std::size_t count, dtype type, int peer, std::uint32_t tag = 0,
            timeout_type timeout = {});

  /// Receives `count` elements sent by rank `peer` with `tag` (count and dtype must match the send).
  void recv(void* data, std::size_t count, dtype type, int peer, std::uint32_t tag = 0,
            timeout_type timeout = {});

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace am

#endif // ACTORMESH_DEVICES_COLLECTIVES_COMMUNICATOR_HPP
