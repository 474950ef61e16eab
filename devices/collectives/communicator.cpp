// am::communicator's public operations: each checks its caller's arguments and says how its bytes
// move (through Gloo, or carried with the check over the shared-memory mesh); communicator::impl
// (communicator_impl.hpp) numbers, checks and runs them.
#include "actormesh/devices/collectives/communicator.hpp"

#include "actors/cluster_services.hpp"
#include "actormesh/actors/errors.hpp"
#include "devices/collectives/communicator_impl.hpp"
#include "devices/collectives/communicator_operation.hpp"
#include "devices/collectives/communicator_waits.hpp"
#include "devices/collectives/gloo_engine.hpp"
#include "devices/collectives/mesh_transfer.hpp"
#include "devices/collectives/reduce_kernels.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <utility>

namespace am {

namespace {

using milliseconds = std::chrono::milliseconds;
using clock = detail::shm_mesh::clock;
using detail::carried_bytes;
using detail::copy_of;
using detail::landed_bytes;
using detail::ms_text;
using detail::operation_kind;

/// Longest communicator name.
constexpr std::size_t max_name_length = 200;

void check_name(const std::string& name) {
  if (name.empty() || name.size() > max_name_length)
    throw value_error("A communicator name has 1 to " + std::to_string(max_name_length) + " characters, got "
                      + std::to_string(name.size()));
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f || c == '/')
      throw value_error("Communicator name '" + name
                        + "' has a '/' or a control character (names prefix the rendezvous keys)");
}

/// This process's rank in `processes`, after checking the list.
int rank_in(const std::vector<int>& processes, int me, int process_count) {
  if (processes.empty())
    throw value_error("A communicator needs at least one process, got an empty list");
  for (std::size_t i = 0; i < processes.size(); ++i) {
    if (processes[i] < 0 || processes[i] >= process_count)
      throw value_error("Process " + std::to_string(processes[i]) + " in " + detail::bracketed_list_text(processes)
                        + " is not a process of the cluster (0 to " + std::to_string(process_count - 1) + ")");
    if (i > 0 && processes[i] <= processes[i - 1])
      throw value_error("The processes of a communicator are sorted and distinct (ranks follow the list), got "
                        + detail::bracketed_list_text(processes));
  }
  auto it = std::find(processes.begin(), processes.end(), me);
  if (it == processes.end())
    throw value_error("This process (" + std::to_string(me) + ") is not in the communicator's processes "
                      + detail::bracketed_list_text(processes));
  return static_cast<int>(it - processes.begin());
}

/// `count` elements of `t` in bytes, refusing sizes that overflow; `copies` buffers of them.
std::size_t checked_bytes(std::size_t count, dtype t, std::size_t copies = 1) {
  const std::size_t element = size_of(t);
  if (element == 0)
    throw value_error("Unknown dtype code " + std::to_string(static_cast<int>(t)));
  if (count != 0 && (copies > std::numeric_limits<std::size_t>::max() / element / count))
    throw value_error(std::to_string(count) + " elements of " + std::string(name(t)) + " (x"
                      + std::to_string(copies) + ") overflow the size of a buffer");
  return count * element * copies;
}

void check_buffer(const void* p, std::size_t count, const char* what) {
  if (p == nullptr && count != 0)
    throw value_error(std::string(what) + " is null but holds " + std::to_string(count) + " elements");
}

void check_peer(int peer, int rank, int size, const std::string& communicator, const char* what) {
  if (peer < 0 || peer >= size)
    throw value_error(std::string(what) + "'s peer " + std::to_string(peer) + " is not a rank of communicator '"
                      + communicator + "' (0 to " + std::to_string(size - 1) + ")");
  if (peer == rank)
    throw value_error(std::string(what) + " to its own rank " + std::to_string(rank) + ": copy the buffer instead");
}

operation_kind p2p_kind(dtype type, std::size_t count, int from, int to, std::uint32_t tag) {
  return operation_kind("send/recv", type, count,
                        " from rank " + std::to_string(from) + " to rank " + std::to_string(to)
                          + " tag=" + std::to_string(tag));
}

} // namespace

namespace detail {

// The helpers of carried collectives (communicator_operation.hpp says what they do).

const std::vector<std::byte>& landed_bytes(const std::vector<std::vector<std::byte>>& landed, std::size_t r,
                                           std::size_t bytes, const std::vector<int>& processes) {
  if (r >= landed.size() || landed[r].size() != bytes)
    throw runtime_error("the bytes of process " + std::to_string(processes[r])
                        + " did not arrive whole over shared memory ("
                        + std::to_string(r < landed.size() ? landed[r].size() : 0) + " of " + std::to_string(bytes)
                        + " bytes)");
  return landed[r];
}

std::vector<std::byte> copy_of(const void* data, std::size_t bytes) {
  const auto* begin = static_cast<const std::byte*>(data);
  return bytes == 0 ? std::vector<std::byte>{} : std::vector<std::byte>(begin, begin + bytes);
}

} // namespace detail

communicator::communicator(detail::cluster_services& cluster, std::vector<int> processes, std::string name,
                           std::string bind_address, std::chrono::milliseconds timeout) {
  check_name(name);
  if (timeout.count() <= 0)
    throw value_error("A communicator's timeout must be positive, got " + ms_text(timeout));
  const int rank = rank_in(processes, cluster.process_index(), cluster.process_count());
  detail::gloo_engine::check_bind_address(bind_address);
  impl_ = std::make_unique<impl>(cluster, std::move(processes), std::move(name), std::move(bind_address), timeout,
                                 rank);
  impl_->claim_name();
  impl_->create();
}

communicator::~communicator() = default;

const std::string& communicator::name() const noexcept {
  return impl_->name;
}

int communicator::rank() const noexcept {
  return impl_->rank;
}

int communicator::size() const noexcept {
  return static_cast<int>(impl_->processes.size());
}

const std::vector<int>& communicator::processes() const noexcept {
  return impl_->processes;
}

std::chrono::milliseconds communicator::timeout() const noexcept {
  return impl_->timeout;
}

std::uint64_t communicator::steps() const noexcept {
  std::lock_guard<std::mutex> guard(impl_->mutex);
  return impl_->steps;
}

bool communicator::broken() const noexcept {
  return impl_->broken.load(std::memory_order_acquire);
}

std::string communicator::broken_reason() const {
  std::lock_guard<std::mutex> guard(impl_->mutex);
  return impl_->broken_reason;
}

void communicator::all_reduce(const void* input, void* output, std::size_t count, dtype type, reduce_op op,
                              timeout_type timeout) {
  checked_bytes(count, type);
  check_buffer(input, count, "all_reduce's input");
  check_buffer(output, count, "all_reduce's output");
  detail::check_reducible(type, op);
  const std::size_t bytes = checked_bytes(count, type);
  const auto ranks = impl_->processes.size();
  std::function<carried_bytes()> carry;
  if (impl_->carries(bytes)) // every rank's input travels with the check; each reduces them in rank order
    carry = [=, this] {
      return carried_bytes{{copy_of(input, bytes), std::vector<std::size_t>(ranks, bytes)},
                           [=, this](const std::vector<std::vector<std::byte>>& landed) {
                             std::vector<std::byte> blocks(ranks * bytes);
                             for (std::size_t r = 0; r < ranks; ++r) {
                               const auto& block = landed_bytes(landed, r, bytes, impl_->processes);
                               std::copy(block.begin(), block.end(), blocks.begin() + static_cast<std::ptrdiff_t>(r * bytes));
                             }
                             if (count != 0)
                               detail::reduce_blocks(type, op, blocks.data(), static_cast<int>(ranks), count, output);
                           }};
    };
  impl_->run_collective(
    operation_kind("all_reduce(" + std::string(am::name(op)) + ")", type, count),
    [=](detail::gloo_engine& engine, std::uint32_t tag, milliseconds left) {
      engine.all_reduce(input, output, count, type, op, tag, left);
    },
    timeout, {}, carry, [=](detail::shm_mesh& mesh, std::uint64_t step, clock::time_point deadline) {
      return detail::mesh_reduce(mesh, step, input, output, count, type, op, true, deadline);
    });
}

void communicator::all_gather(const void* input, void* output, std::size_t count, dtype type, timeout_type timeout) {
  checked_bytes(count, type, impl_->processes.size());
  check_buffer(input, count, "all_gather's input");
  check_buffer(output, count, "all_gather's output");
  // The receives are posted before the check (gloo_engine::post_all_gather says why).
  auto posted = std::make_shared<std::shared_ptr<void>>();
  const std::size_t bytes = checked_bytes(count, type);
  const auto ranks = impl_->processes.size();
  std::function<carried_bytes()> carry;
  if (impl_->carries(bytes))
    carry = [=, this] {
      return carried_bytes{{copy_of(input, bytes), std::vector<std::size_t>(ranks, bytes)},
                           [=, this](const std::vector<std::vector<std::byte>>& landed) {
                             auto* out = static_cast<std::byte*>(output);
                             for (std::size_t r = 0; r < ranks; ++r) {
                               const auto& block = landed_bytes(landed, r, bytes, impl_->processes);
                               std::copy(block.begin(), block.end(), out + r * bytes);
                             }
                           }};
    };
  impl_->run_collective(
    operation_kind("all_gather", type, count),
    [=](detail::gloo_engine& engine, std::uint32_t tag, milliseconds left) {
      engine.all_gather(input, output, count, type, tag, left, *posted);
      posted->reset();
    },
    timeout, [=](detail::gloo_engine& engine, std::uint32_t tag) { *posted = engine.post_all_gather(output, count, type, tag); },
    carry, [=](detail::shm_mesh& mesh, std::uint64_t step, clock::time_point deadline) {
      return detail::mesh_all_gather(mesh, step, input, output, bytes, deadline);
    });
}

void communicator::reduce_scatter(const void* input, void* output, std::size_t count, dtype type, reduce_op op,
                                  timeout_type timeout) {
  checked_bytes(count, type);
  check_buffer(input, count, "reduce_scatter's input");
  check_buffer(output, split_block(count, size(), rank()).count, "reduce_scatter's output");
  detail::check_reducible(type, op);
  impl_->run_collective(
    operation_kind("reduce_scatter(" + std::string(am::name(op)) + ")", type, count),
    [=](detail::gloo_engine& engine, std::uint32_t tag, milliseconds left) {
      engine.reduce_scatter(input, output, count, type, op, tag, left);
    },
    timeout, {}, {}, [=](detail::shm_mesh& mesh, std::uint64_t step, clock::time_point deadline) {
      return detail::mesh_reduce(mesh, step, input, output, count, type, op, false, deadline);
    });
}

void communicator::broadcast(void* buffer, std::size_t count, dtype type, int root, timeout_type timeout) {
  checked_bytes(count, type);
  check_buffer(buffer, count, "broadcast's buffer");
  if (root < 0 || root >= size())
    throw value_error("broadcast's root " + std::to_string(root) + " is not a rank of communicator '"
                      + impl_->name + "' (0 to " + std::to_string(size() - 1) + ")");
  // A small broadcast's receive is posted before the check (gloo_engine::post_broadcast).
  auto posted = std::make_shared<std::shared_ptr<void>>();
  const std::size_t bytes = checked_bytes(count, type);
  std::function<carried_bytes()> carry;
  if (impl_->carries(bytes)) // the root's bytes reach every rank in the check's rounds
    carry = [=, this] {
      const bool mine = root == rank();
      std::vector<std::size_t> expected(impl_->processes.size(), 0);
      expected[static_cast<std::size_t>(root)] = bytes;
      return carried_bytes{{mine ? copy_of(buffer, bytes) : std::vector<std::byte>{}, std::move(expected)},
                           [=, this](const std::vector<std::vector<std::byte>>& landed) {
                             if (mine)
                               return;
                             const auto& from_root =
                               landed_bytes(landed, static_cast<std::size_t>(root), bytes, impl_->processes);
                             std::copy(from_root.begin(), from_root.end(), static_cast<std::byte*>(buffer));
                           }};
    };
  impl_->run_collective(
    operation_kind("broadcast", type, count, " root=" + std::to_string(root)),
    [=](detail::gloo_engine& engine, std::uint32_t tag, milliseconds left) {
      engine.broadcast(buffer, count, type, root, tag, left, *posted);
      posted->reset();
    },
    timeout,
    [=](detail::gloo_engine& engine, std::uint32_t tag) { *posted = engine.post_broadcast(buffer, count, type, root, tag); },
    carry, [=](detail::shm_mesh& mesh, std::uint64_t step, clock::time_point deadline) {
      return detail::mesh_broadcast(mesh, step, buffer, bytes, root, deadline);
    });
}

void communicator::all_to_all(const void* input, void* output, std::size_t count, dtype type, timeout_type timeout) {
  checked_bytes(count, type);
  check_buffer(input, count, "all_to_all's input");
  check_buffer(output, count, "all_to_all's output");
  if (count % static_cast<std::size_t>(size()) != 0)
    throw value_error("all_to_all splits its " + std::to_string(count) + " elements into " + std::to_string(size())
                      + " equal blocks: the count must be divisible by the number of ranks");
  impl_->run_collective(
    operation_kind("all_to_all", type, count),
    [=](detail::gloo_engine& engine, std::uint32_t tag, milliseconds left) {
      engine.all_to_all(input, output, count, type, tag, left);
    },
    timeout);
}

void communicator::barrier(const std::string& name, timeout_type timeout) {
  agree("Barrier '" + name + "'", "barrier '" + name + "'", timeout);
}

void communicator::agree(const std::string& label, const std::string& signature, timeout_type timeout) {
  if (label.empty())
    throw value_error("communicator::agree needs a label: its errors name the agreement by it");
  impl_->run_collective(
    operation_kind::agreement(label, signature), [](detail::gloo_engine&, std::uint32_t, milliseconds) {}, timeout);
}

void communicator::agree_pair(int from, int to, const std::string& label, const std::string& signature,
                              timeout_type timeout) {
  if (label.empty())
    throw value_error("communicator::agree_pair needs a label: its errors name the agreement by it");
  const int peer = from == rank() ? to : from;
  if (from != rank() && to != rank())
    throw value_error("communicator::agree_pair: rank " + std::to_string(rank()) + " of communicator '" + impl_->name
                      + "' is neither end of the pair " + std::to_string(from) + " -> " + std::to_string(to));
  check_peer(peer, rank(), size(), impl_->name, "agree_pair");
  impl_->run_p2p(
    from, to, operation_kind::agreement(label, signature), [](detail::gloo_engine&, std::uint32_t, milliseconds) {},
    [](detail::shm_mesh&, std::uint8_t, std::uint64_t, clock::time_point) {}, timeout);
}

void communicator::send(const void* data, std::size_t count, dtype type, int peer, std::uint32_t tag,
                        timeout_type timeout) {
  const std::size_t bytes = checked_bytes(count, type);
  check_buffer(data, count, "send's buffer");
  check_peer(peer, rank(), size(), impl_->name, "send");
  impl_->run_p2p(
    rank(), peer, p2p_kind(type, count, rank(), peer, tag),
    [=](detail::gloo_engine& engine, std::uint32_t, milliseconds left) { engine.send(data, bytes, peer, tag, left); },
    [=](detail::shm_mesh& mesh, std::uint8_t lane, std::uint64_t step, clock::time_point deadline) {
      detail::mesh_send(mesh, peer, lane, step, data, bytes, deadline);
    },
    timeout);
}

void communicator::recv(void* data, std::size_t count, dtype type, int peer, std::uint32_t tag,
                        timeout_type timeout) {
  const std::size_t bytes = checked_bytes(count, type);
  check_buffer(data, count, "recv's buffer");
  check_peer(peer, rank(), size(), impl_->name, "recv");
  impl_->run_p2p(
    peer, rank(), p2p_kind(type, count, peer, rank(), tag),
    [=](detail::gloo_engine& engine, std::uint32_t, milliseconds left) { engine.recv(data, bytes, peer, tag, left); },
    [=](detail::shm_mesh& mesh, std::uint8_t lane, std::uint64_t step, clock::time_point deadline) {
      detail::mesh_recv(mesh, peer, lane, step, data, bytes, deadline);
    },
    timeout);
}

} // namespace am
