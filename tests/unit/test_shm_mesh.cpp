// The shared-memory mesh under the collectives' checks, against a hostile peer: a rank of the mesh
// that sends a check short, lying or oversized messages instead of its record. The check must
// neither read past what arrived nor trust a count or an index, and must end (never hang).
#include "devices/collectives/fingerprint_dissemination.hpp"
#include "devices/collectives/shm_mesh.hpp"

#include "actors/errors.hpp"
#include "support/local_cluster_services.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <future>
#include <thread>

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
