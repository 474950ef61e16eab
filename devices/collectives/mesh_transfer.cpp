#include "devices/collectives/mesh_transfer.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/collectives/fingerprint_dissemination.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace am::detail {

namespace {

using transfer_ptr = std::shared_ptr<shm_mesh::transfer>;
using message = point_to_point_message;

/// Every bit of a tag matters: one sender, one step, one kind.
constexpr std::uint64_t exact_tag = ~std::uint64_t{0};

/// How long a transfer that its owner gives up on may take to let go of the owner's memory.
constexpr std::chrono::seconds settle_limit{2};

/// The descriptor: the sender's process id, the address and the length of its bytes.
constexpr std::size_t descriptor_bytes = 24;

/// The receiver's replies.
constexpr std::byte reply_read{'r'};
constexpr std::byte reply_copy{'c'};

/// The most bytes one process_vm_readv is asked for (it may return fewer).
constexpr std::size_t read_slice = std::size_t{1} << 30;

std::vector<std::byte> one_byte(std::byte b) { return std::vector<std::byte>(1, b); }

/// How a receive says that a length is not the one it expects.
std::string length_mismatch(std::uint64_t got, std::size_t expected) {
  return "got " + std::to_string(got) + " bytes where " + std::to_string(expected) + " were expected";
}

std::uint64_t word_at(const std::vector<std::byte>& bytes, std::size_t at) {
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}

} // namespace

void wait_for_transfers(shm_mesh& mesh, const std::vector<std::shared_ptr<shm_mesh::transfer>>& transfers,
                        shm_mesh::clock::time_point deadline, const std::string& what) {
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

bool single_copy_allowed() {
  const char* setting = std::getenv("AM_SHM_SINGLE_COPY");
  return setting == nullptr || std::string(setting) != "0";
}

read_outcome read_from(pid_t pid, std::uint64_t address, void* data, std::size_t bytes, std::string& why) {
  std::size_t done = 0;
  while (done < bytes) {
    const std::size_t want = std::min(read_slice, bytes - done);
    iovec local{static_cast<std::byte*>(data) + done, want};
    iovec remote{reinterpret_cast<void*>(static_cast<std::uintptr_t>(address + done)), want};
    const ssize_t got = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got > 0) {
      done += static_cast<std::size_t>(got);
      continue;
    }
    const int error = got == 0 ? EFAULT : errno;
    if (error == EINTR)
      continue;
    if (done == 0 && (error == EPERM || error == ENOSYS))
      return read_outcome::not_permitted;
    why = std::strerror(error);
    return read_outcome::failed;
  }
  return read_outcome::done;
}

void mesh_send(shm_mesh& mesh, int peer, std::uint8_t lane, std::uint64_t step, const void* data, std::size_t bytes,
               shm_mesh::clock::time_point deadline) {
  if (bytes == 0)
    return;
  const std::string what = "send to rank " + std::to_string(peer);
  const int me = mesh.rank();
  auto reply = mesh.receive(point_to_point_tag(message::reply, lane, step, peer), exact_tag, 1);
  std::vector<std::byte> descriptor(descriptor_bytes);
  const std::uint64_t words[3] = {static_cast<std::uint64_t>(::getpid()),
                                  static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(data)), bytes};
  std::memcpy(descriptor.data(), words, sizeof words);
  auto sent = mesh.send(peer, point_to_point_tag(message::descriptor, lane, step, me), std::move(descriptor));
  wait_for_transfers(mesh, {sent, reply}, deadline, what);
  if (reply->length != 1 || (reply->bytes[0] != reply_read && reply->bytes[0] != reply_copy))
    throw runtime_error("the " + what + " over shared memory got a reply that is not one");
  if (reply->bytes[0] == reply_copy) { // the receiver may not read this memory: the bytes go through the segments
    auto copied = mesh.send_from(peer, point_to_point_tag(message::copy, lane, step, me), data, bytes);
    wait_for_transfers(mesh, {copied}, deadline, what);
  }
  // The memory stayed as it was until now: say so.
  auto note = mesh.send(peer, point_to_point_tag(message::release, lane, step, me), one_byte(std::byte{1}));
  wait_for_transfers(mesh, {note}, deadline, what);
}

void mesh_recv(shm_mesh& mesh, int peer, std::uint8_t lane, std::uint64_t step, void* data, std::size_t bytes,
               shm_mesh::clock::time_point deadline) {
  if (bytes == 0)
    return;
  const std::string what = "receive from rank " + std::to_string(peer);
  const int me = mesh.rank();
  auto descriptor = mesh.receive(point_to_point_tag(message::descriptor, lane, step, peer), exact_tag,
                                 descriptor_bytes);
  auto release = mesh.receive(point_to_point_tag(message::release, lane, step, peer), exact_tag, 1);
  try {
    wait_for_transfers(mesh, {descriptor}, deadline, what);
  } catch (...) {
    mesh.settle(release, settle_limit);
    throw;
  }
  auto refuse = [&](const std::string& why) {
    mesh.settle(release, settle_limit);
    throw runtime_error("the " + what + " over shared memory " + why);
  };
  if (descriptor->length != descriptor_bytes)
    refuse("got a descriptor of " + std::to_string(descriptor->length) + " bytes");
  const std::uint64_t pid = word_at(descriptor->bytes, 0), address = word_at(descriptor->bytes, 8),
                      length = word_at(descriptor->bytes, 16);
  if (pid != static_cast<std::uint64_t>(mesh.pid_of(peer)))
    refuse("names process id " + std::to_string(pid) + ", not the sender's " + std::to_string(mesh.pid_of(peer)));
  if (length != bytes)
    refuse(length_mismatch(length, bytes));
  std::string why;
  const auto outcome = single_copy_allowed() ? read_from(static_cast<pid_t>(pid), address, data, bytes, why)
                                             : read_outcome::not_permitted;
  if (outcome == read_outcome::failed)
    refuse("could not read the sender's memory (" + why + "): the sending process is gone or gave up");
  if (outcome == read_outcome::done) {
    auto answered = mesh.send(peer, point_to_point_tag(message::reply, lane, step, me), one_byte(reply_read));
    wait_for_transfers(mesh, {answered, release}, deadline, what);
    return;
  }
  auto copied = mesh.receive_into(point_to_point_tag(message::copy, lane, step, peer), exact_tag, data, bytes);
  auto answered = mesh.send(peer, point_to_point_tag(message::reply, lane, step, me), one_byte(reply_copy));
  wait_for_transfers(mesh, {answered, copied, release}, deadline, what);
  if (copied->length != bytes)
    throw runtime_error("the " + what + " over shared memory " + length_mismatch(copied->length, bytes));
}

} // namespace am::detail
