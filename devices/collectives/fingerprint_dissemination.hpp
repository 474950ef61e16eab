/// The participants' check of one collective over the shared-memory mesh, in ceil(log2 n) rounds
/// instead of one message from every participant to every other: in round k each participant
/// sends the records it knows to the one 2^k places after it and receives from the one 2^k places
/// before it (a dissemination barrier whose messages carry the fingerprints), so after the last
/// round every participant holds every record and decides alike. Only when a participant's time
/// runs out does it ask each peer directly whether it has come (a probe), and it sends the peers
/// its verdict so that they, and a latecomer, report the same. Internal.
#pragma once

#include "devices/collectives/collective_fingerprint.hpp"
#include "devices/collectives/shm_mesh.hpp"

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace am::detail {

/// Bytes that travel with the fingerprints: the data of a small collective, so that its check and
/// its bytes take the same rounds.
struct dissemination_payload {
  std::vector<std::byte> mine;       ///< this rank's bytes
  std::vector<std::size_t> expected; ///< bytes each position of the group sends (0: none); empty for no payloads
};

/// What one check brought.
struct dissemination_outcome {
  /// Every participant's record in the order of `group` (fingerprint_bytes each; zero bytes where
  /// none came). Complete when neither `verdict` nor `error` is set.
  std::vector<std::byte> records;
  /// A verdict on this step that a peer sent (it timed out and said who had not come).
  std::optional<std::string> verdict;
  /// This participant's own timeout (am::timeout_error, with `missing` set), the mesh's abort or a
  /// transport failure (am::runtime_error), or what `idle` threw.
  std::exception_ptr error;
  /// On this participant's own timeout: the ranks of `group` that did not answer its probe.
  std::vector<int> missing;
  /// The payloads by position in `group` (this rank's included); one that did not come, or came
  /// with another length than expected, is empty.
  std::vector<std::vector<std::byte>> payloads;
};

/// Checks step `step` of sequence `lane` (0-3) among the ranks of `group` (sorted, this rank among
/// them): sends this rank's record `mine` on its way and gathers everyone's, until `deadline`.
/// `idle`, when given, runs about every `idle_every` while waiting (the caller's liveness check; what
/// it throws ends the check). `payload`'s bytes travel with the records: a round's records go in
/// one message and the payloads it forwards in a second one, whose size the first announces, so a
/// peer whose payload differs in size (a desync) still has its record read and named.
dissemination_outcome disseminate_fingerprints(shm_mesh& mesh, const std::vector<int>& group, std::uint8_t lane,
                                               std::uint64_t step, const fingerprint_record& mine,
                                               shm_mesh::clock::time_point deadline,
                                               const std::function<void()>& idle = {},
                                               std::chrono::milliseconds idle_every = std::chrono::milliseconds(50),
                                               dissemination_payload payload = {});

/// The tag under which `sender`'s message of round `round` of step `step` on `lane` travels (the
/// tests forge such messages).
std::uint64_t dissemination_round_tag(unsigned round, std::uint8_t lane, std::uint64_t step, int sender);

/// The tag of the payloads that follow that message.
std::uint64_t dissemination_payload_tag(unsigned round, std::uint8_t lane, std::uint64_t step, int sender);

/// The messages of a send/recv over the mesh (mesh_transfer.cpp), each under a tag of its own.
enum class point_to_point_message : std::uint8_t {
  descriptor = 4, ///< sender -> receiver: where the bytes are (process, address, length)
  release = 5,    ///< sender -> receiver: the memory stayed as it was until the reply came
  reply = 6,      ///< receiver -> sender: read, or send the bytes instead
  copy = 7,       ///< sender -> receiver: the bytes themselves, when the receiver may not read them
};

/// The tag of message `m` that `sender` sends for step `step` of `lane`.
std::uint64_t point_to_point_tag(point_to_point_message m, std::uint8_t lane, std::uint64_t step, int sender);

/// The tag of the message of phase `phase` that `sender` sends in step `step` of `lane` of a
/// collective whose ranks read each other's memory (mesh_collectives.cpp).
std::uint64_t mesh_collective_tag(unsigned phase, std::uint8_t lane, std::uint64_t step, int sender);

/// Sends `text`, this rank's verdict on step `step` of `lane`, to every other rank of `group`.
void send_verdict(shm_mesh& mesh, const std::vector<int>& group, std::uint8_t lane, std::uint64_t step,
                  const std::string& text);

} // namespace am::detail
