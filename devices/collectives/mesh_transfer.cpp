#include "devices/collectives/mesh_transfer.hpp"

#include "actors/errors.hpp"
#include "devices/collectives/fingerprint_dissemination.hpp"

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace am::detail {

namespace {

using transfer_ptr = std::shared_ptr<shm_mesh::transfer>;

/// Every bit of a tag matters: one sender, one step, one kind.
constexpr std::uint64_t exact_tag = ~std::uint64_t{0};

/// How long a transfer that its owner gives up on may take to let go of the owner's memory: a
/// rendezvous already under way reads at memory speed, and a cancelled receive ends at once.
constexpr std::chrono::seconds settle_limit{2};

/// Waits until every one of `transfers` is done; otherwise lets go of each (settle) and throws what
/// ended the wait: the deadline, an abort, or UCX's failure of one of them.
void wait_for(shm_mesh& mesh, std::initializer_list<transfer_ptr> transfers, shm_mesh::clock::time_point deadline,
              const std::string& what) {
  auto all_done = [&] {
    for (auto& t : transfers)
      if (!t->done)
        return false;
    return true;
  };
  auto let_go = [&] {
    for (auto& t : transfers)
      mesh.settle(t, settle_limit);
  };
  const auto woke = mesh.wait(all_done, deadline);
  if (woke == shm_mesh::wake::timed_out) {
    let_go();
    throw timeout_error("the " + what + " over shared memory timed out");
  }
  if (woke == shm_mesh::wake::aborted) {
    let_go();
    throw runtime_error("the " + what + " over shared memory was aborted: " + mesh.abort_reason());
  }
  for (auto& t : transfers)
    if (t->failed) {
      let_go();
      throw runtime_error("UCX failed the " + what + " over shared memory: " + t->error);
    }
}

} // namespace

void mesh_send(shm_mesh& mesh, int peer, std::uint8_t lane, std::uint64_t step, const void* data, std::size_t bytes,
               shm_mesh::clock::time_point deadline) {
  if (bytes == 0)
    return;
  auto sent = mesh.send_from(peer, point_to_point_bytes_tag(lane, step, mesh.rank()), data, bytes);
  wait_for(mesh, {sent}, deadline, "send to rank " + std::to_string(peer));
  // The receiver has read every byte, and the memory stayed ours until now: say so.
  auto note = mesh.send(peer, point_to_point_release_tag(lane, step, mesh.rank()), std::vector<std::byte>(1));
  wait_for(mesh, {note}, deadline, "send to rank " + std::to_string(peer));
}

void mesh_recv(shm_mesh& mesh, int peer, std::uint8_t lane, std::uint64_t step, void* data, std::size_t bytes,
               shm_mesh::clock::time_point deadline) {
  if (bytes == 0)
    return;
  auto received = mesh.receive_into(point_to_point_bytes_tag(lane, step, peer), exact_tag, data, bytes);
  auto note = mesh.receive(point_to_point_release_tag(lane, step, peer), exact_tag, 1);
  wait_for(mesh, {received, note}, deadline, "receive from rank " + std::to_string(peer));
  if (received->length != bytes)
    throw runtime_error("the receive from rank " + std::to_string(peer) + " over shared memory got "
                        + std::to_string(received->length) + " bytes where " + std::to_string(bytes)
                        + " were expected");
}

} // namespace am::detail
