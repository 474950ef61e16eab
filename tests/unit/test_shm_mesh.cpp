// The shared-memory mesh under the collectives' checks, against a hostile peer: a rank of the mesh
// that sends a check short, lying or oversized messages instead of its record. The check must
// neither read past what arrived nor trust a count or an index, and must end (never hang). And a
// send/recv's bytes over it (mesh_transfer.hpp): intact at every size, never trusted without the
// sender's release note or from a forged descriptor, and ended by a deadline or an abort.
#include "devices/collectives/fingerprint_dissemination.hpp"
#include "devices/collectives/mesh_collectives.hpp"
#include "devices/collectives/mesh_transfer.hpp"
#include "devices/collectives/shm_mesh.hpp"

#include "actormesh/actors/errors.hpp"
#include "support/local_cluster_services.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <future>
#include <thread>
#include <unistd.h>

namespace {

using namespace std::chrono_literals;
using am::detail::shm_mesh;

/// Two ranks' meshes over `cluster`, or nulls when this machine has no UCX (then nothing to test).
std::pair<std::unique_ptr<shm_mesh>, std::unique_ptr<shm_mesh>> two_meshes(am::test::local_cluster& cluster,
                                                                           const std::string& prefix) {
  const auto deadline = shm_mesh::clock::now() + 10s;
  auto other = std::async(std::launch::async,
                          [&] { return shm_mesh::connect(cluster.services(1), prefix, 1, 2, deadline); });
  auto first = shm_mesh::connect(cluster.services(0), prefix, 0, 2, deadline);
  return {std::move(first), other.get()};
}

std::vector<std::byte> bytes_of(std::initializer_list<std::uint32_t> words, std::size_t extra = 0) {
  std::vector<std::byte> out(words.size() * 4 + extra, std::byte{0x5a});
  std::size_t at = 0;
  for (auto w : words) {
    std::memcpy(out.data() + at, &w, 4);
    at += 4;
  }
  return out;
}

} // namespace

TEST_CASE("a check over shared memory survives short, lying and oversized messages from a peer", "[collectives][shm]") {
  am::test::local_cluster cluster(2);
  auto [hostile, honest] = two_meshes(cluster, "am/test/shm-hostile/");
  if (!hostile) {
    WARN("no shared-memory mesh here (UCX missing): nothing to check");
    return;
  }
  REQUIRE(honest);
  const std::vector<int> group{0, 1};
  const auto mine = am::detail::encode_fingerprint(1, "barrier 'x'");
  struct forged {
    const char* what;
    std::vector<std::byte> message;
    bool fails; // the transfer itself fails (larger than the receive)
    std::vector<std::byte> payload; // sent after the message as its payloads, when not empty
  };
  // A round's message: count, payload flag, then (position, payload length, record) entries.
  const std::vector<forged> cases{
    {"two bytes", std::vector<std::byte>(2, std::byte{1}), false, {}},
    {"a count of 2^32-1 with one entry", bytes_of({0xffffffffu, 0, 0, 0}, am::detail::fingerprint_bytes), false, {}},
    {"an entry at position 7 of a group of 2", bytes_of({1, 0, 7, 0}, am::detail::fingerprint_bytes), false, {}},
    {"an entry claiming the receiver's own position", bytes_of({1, 0, 1, 0}, am::detail::fingerprint_bytes), false, {}},
    {"a payload the receiver does not expect, of a length past its message",
     bytes_of({1, 1, 0, 0xfffffff0u}, am::detail::fingerprint_bytes), false, std::vector<std::byte>(100, std::byte{3})},
    {"a mebibyte", std::vector<std::byte>(1 << 20, std::byte{7}), true, {}},
  };
  std::uint64_t step = 1;
  for (const auto& c : cases) {
    INFO(c.what);
    // The hostile rank sends, then keeps its end going (a large message needs it) for a while.
    auto sender = std::async(std::launch::async, [&, step] {
      auto sent = hostile->send(1, am::detail::dissemination_round_tag(0, 0, step, 0), c.message);
      if (!c.payload.empty())
        sent = hostile->send(1, am::detail::dissemination_payload_tag(0, 0, step, 0), c.payload);
      hostile->wait([&] { return sent->done; }, shm_mesh::clock::now() + 2s);
    });
    const auto started = shm_mesh::clock::now();
    auto outcome = am::detail::disseminate_fingerprints(*honest, group, 0, step, mine, started + 5s);
    sender.get();
    CHECK(shm_mesh::clock::now() - started < 4s); // ended on the message, not at the deadline
    CHECK_FALSE(outcome.verdict);
    if (c.fails) {
      CHECK(outcome.error);
    } else {
      REQUIRE_FALSE(outcome.error);
      REQUIRE(outcome.records.size() == 2 * am::detail::fingerprint_bytes);
      // The honest rank's own record stands; the forged one is nobody's fingerprint.
      CHECK(std::memcmp(outcome.records.data() + am::detail::fingerprint_bytes, mine.data(), mine.size()) == 0);
      CHECK_FALSE(am::detail::decode_fingerprint(outcome.records.data()));
    }
    ++step;
  }
}

TEST_CASE("a check over shared memory ends at an abort from another thread", "[collectives][shm]") {
  am::test::local_cluster cluster(2);
  auto [quiet, waiting] = two_meshes(cluster, "am/test/shm-abort/");
  if (!quiet) {
    WARN("no shared-memory mesh here (UCX missing): nothing to check");
    return;
  }
  const auto started = shm_mesh::clock::now();
  std::thread aborter([&] {
    std::this_thread::sleep_for(200ms);
    waiting->abort("the test gave up");
  });
  auto outcome = am::detail::disseminate_fingerprints(*waiting, {0, 1}, 0, 1, am::detail::encode_fingerprint(1, "x"),
                                                      started + 20s);
  aborter.join();
  CHECK(shm_mesh::clock::now() - started < 5s);
  REQUIRE(outcome.error);
  try {
    std::rethrow_exception(outcome.error);
  } catch (const am::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("the test gave up"));
  }
}

namespace {

/// `n` bytes of a pattern that `seed` shifts.
std::vector<std::uint8_t> pattern(std::size_t n, unsigned seed) {
  std::vector<std::uint8_t> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<std::uint8_t>(i * 131 + seed);
  return out;
}

using am::detail::point_to_point_message;
using am::detail::point_to_point_tag;

/// A send/recv descriptor as mesh_transfer.cpp sends it: process id, address, length.
std::vector<std::byte> descriptor(std::uint64_t pid, const void* address, std::uint64_t length) {
  std::vector<std::byte> out(24);
  const std::uint64_t words[3] = {pid, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(address)), length};
  std::memcpy(out.data(), words, sizeof words);
  return out;
}

/// Sets AM_SHM_SINGLE_COPY for the scope: "0" makes the receiver ask for the bytes through the
/// shared segments instead of reading them.
struct single_copy_setting {
  explicit single_copy_setting(const char* value) { ::setenv("AM_SHM_SINGLE_COPY", value, 1); }
  ~single_copy_setting() { ::unsetenv("AM_SHM_SINGLE_COPY"); }
};

} // namespace

TEST_CASE("a send/recv over shared memory arrives intact at every size, read or copied", "[collectives][shm]") {
  am::test::local_cluster cluster(2);
  auto [sender, receiver] = two_meshes(cluster, "am/test/shm-p2p/");
  if (!sender) {
    WARN("no shared-memory mesh here (UCX missing): nothing to check");
    return;
  }
  const std::vector<std::size_t> sizes{1, 100, 8192 + 3, 65536, 1 << 20, (64 << 20) + 5};
  std::uint64_t step = 0;
  for (const char* single_copy : {"1", "0"}) {
    single_copy_setting setting(single_copy);
    for (std::size_t n : sizes) {
      INFO(n << " bytes, AM_SHM_SINGLE_COPY=" << single_copy);
      auto sent = pattern(n, static_cast<unsigned>(step));
      std::vector<std::uint8_t> got(n, 0);
      const auto deadline = shm_mesh::clock::now() + 20s;
      auto receiving = std::async(std::launch::async, [&, s = step] {
        am::detail::mesh_recv(*receiver, 0, 1, s, got.data(), n, deadline);
      });
      am::detail::mesh_send(*sender, 1, 1, step, sent.data(), n, deadline);
      receiving.get();
      CHECK(got == sent);
      ++step;
    }
  }
}

TEST_CASE("a send/recv over shared memory refuses forged descriptors and bytes without the release note",
          "[collectives][shm]") {
  am::test::local_cluster cluster(2);
  auto [forger, receiver] = two_meshes(cluster, "am/test/shm-p2p-forged/");
  if (!forger) {
    WARN("no shared-memory mesh here (UCX missing): nothing to check");
    return;
  }
  const std::size_t n = 1 << 20;
  auto real = pattern(n, 5);
  std::vector<std::uint8_t> got(n, 0);
  const auto me = static_cast<std::uint64_t>(::getpid()); // both ranks are this process here
  auto forge = [&](std::uint64_t step, std::vector<std::byte> d) {
    auto t = forger->send(1, point_to_point_tag(point_to_point_message::descriptor, 1, step, 0), std::move(d));
    CHECK_FALSE(t->failed);
  };
  auto refused = [&](std::uint64_t step, const std::string& words) {
    try {
      am::detail::mesh_recv(*receiver, 0, 1, step, got.data(), n, shm_mesh::clock::now() + 5s);
      FAIL("a forged descriptor passed");
    } catch (const am::runtime_error& e) {
      CHECK_THAT(e.what(), Catch::Contains(words));
    }
  };
  SECTION("a good descriptor, but no release note: the bytes were read and are not trusted") {
    forge(0, descriptor(me, real.data(), n));
    const auto started = shm_mesh::clock::now();
    CHECK_THROWS_AS(am::detail::mesh_recv(*receiver, 0, 1, 0, got.data(), n, started + 500ms), am::timeout_error);
    CHECK(shm_mesh::clock::now() - started < 4s);
  }
  SECTION("another process id") {
    forge(1, descriptor(me + 1, real.data(), n));
    refused(1, "names process id " + std::to_string(me + 1) + ", not the sender's");
  }
  SECTION("another length") {
    forge(2, descriptor(me, real.data(), 10));
    refused(2, "got 10 bytes where 1048576 were expected");
  }
  SECTION("a short descriptor") {
    forge(3, std::vector<std::byte>(10));
    refused(3, "got a descriptor of 10 bytes");
  }
  SECTION("an address that is not mapped") {
    forge(4, descriptor(me, reinterpret_cast<const void*>(std::uintptr_t{16}), n));
    refused(4, "could not read the sender's memory (Bad address)");
  }
}

TEST_CASE("a send/recv over shared memory ends at its deadline or an abort, and goes on after", "[collectives][shm]") {
  am::test::local_cluster cluster(2);
  auto [first, second] = two_meshes(cluster, "am/test/shm-p2p-ends/");
  if (!first) {
    WARN("no shared-memory mesh here (UCX missing): nothing to check");
    return;
  }
  std::vector<std::uint8_t> got(1 << 20, 0);
  auto bytes = pattern(got.size(), 3);
  // A receive whose sender never sends, a send whose receiver never receives.
  auto started = shm_mesh::clock::now();
  CHECK_THROWS_AS(am::detail::mesh_recv(*second, 0, 1, 0, got.data(), got.size(), started + 300ms),
                  am::timeout_error);
  CHECK(shm_mesh::clock::now() - started < 3s);
  started = shm_mesh::clock::now();
  CHECK_THROWS_AS(am::detail::mesh_send(*first, 1, 1, 1, bytes.data(), bytes.size(), started + 300ms),
                  am::timeout_error);
  CHECK(shm_mesh::clock::now() - started < 3s);
  CHECK(std::all_of(got.begin(), got.end(), [](std::uint8_t b) { return b == 0; }));
  // The next step moves as if nothing happened (the stale descriptor of step 1 waits unread).
  auto receiving = std::async(std::launch::async, [&] {
    am::detail::mesh_recv(*second, 0, 1, 2, got.data(), got.size(), shm_mesh::clock::now() + 10s);
  });
  am::detail::mesh_send(*first, 1, 1, 2, bytes.data(), bytes.size(), shm_mesh::clock::now() + 10s);
  receiving.get();
  CHECK(got == bytes);
  // An abort from another thread ends a wait at once.
  started = shm_mesh::clock::now();
  std::thread aborter([&] {
    std::this_thread::sleep_for(200ms);
    second->abort("the test gave up");
  });
  try {
    am::detail::mesh_recv(*second, 0, 1, 3, got.data(), got.size(), started + 20s);
    FAIL("the receive ended without its bytes");
  } catch (const am::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("the test gave up"));
  }
  aborter.join();
  CHECK(shm_mesh::clock::now() - started < 5s);
}

TEST_CASE("a collective that reads its peers' memory gets it right, and refuses a peer's forged buffers",
          "[collectives][shm]") {
  am::test::local_cluster cluster(2);
  auto [first, second] = two_meshes(cluster, "am/test/shm-read-collectives/");
  if (!first) {
    WARN("no shared-memory mesh here (UCX missing): nothing to check");
    return;
  }
  const std::size_t n = (1 << 20) + 3; // float32 elements a rank, chunked and split unevenly
  std::vector<float> a(n), b(n), out_a(n), out_b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 1000);
    b[i] = 0.5f * static_cast<float>(i % 7);
  }
  const auto deadline = shm_mesh::clock::now() + 20s;
  auto other = std::async(std::launch::async, [&] {
    return am::detail::mesh_reduce(*second, 1, b.data(), out_b.data(), n, am::dtype::float32, am::reduce_op::sum,
                                   true, deadline);
  });
  CHECK(am::detail::mesh_reduce(*first, 1, a.data(), out_a.data(), n, am::dtype::float32, am::reduce_op::sum, true,
                                deadline)
        == am::detail::mesh_collective_outcome::done);
  CHECK(other.get() == am::detail::mesh_collective_outcome::done);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i)
    wrong += out_a[i] != a[i] + b[i] || out_b[i] != out_a[i];
  CHECK(wrong == 0);

  // A hostile rank 0 sends phase-0 words of its own making: another process id, another length.
  const auto me = static_cast<std::uint64_t>(::getpid());
  auto forged = [&](std::uint64_t step, std::uint64_t pid, std::uint64_t bytes) {
    std::vector<std::uint64_t> words{pid, 16, 16, bytes};
    std::vector<std::byte> message(sizeof(std::uint64_t) * words.size());
    std::memcpy(message.data(), words.data(), message.size());
    auto t = first->send(1, am::detail::mesh_collective_tag(0, 0, step, 0), std::move(message));
    CHECK_FALSE(t->failed);
  };
  auto refused = [&](std::uint64_t step, const std::string& words) {
    try {
      am::detail::mesh_all_gather(*second, step, b.data(), out_b.data(), 4096, shm_mesh::clock::now() + 5s);
      FAIL("forged buffers passed");
    } catch (const am::runtime_error& e) {
      CHECK_THAT(e.what(), Catch::Contains(words));
    }
  };
  forged(2, me + 1, 4096);
  refused(2, "rank 0 names process id " + std::to_string(me + 1));
  forged(3, me, 10);
  refused(3, "rank 0 has 10 bytes where 4096 were expected");
  // An address that is not mapped: the read fails with a named error, never a crash.
  forged(4, me, 4096);
  std::vector<std::uint64_t> status{1, 0};
  std::vector<std::byte> message(16);
  std::memcpy(message.data(), status.data(), 16);
  first->send(1, am::detail::mesh_collective_tag(1, 0, 4, 0), std::move(message));
  refused(4, "could not read rank 0's memory (Bad address)");
}
