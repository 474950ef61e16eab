/// What every participant of one collective must issue alike, as a fixed-size record that travels
/// to its peers ahead of the collective's bytes: its step in its sequence and its signature (the
/// operation, dtype, element count, root or peer and tag, and the participants). Each participant
/// compares every peer's record with its own, so a collective needs no round trip through the
/// mesh supervisor (doc/architecture.md "Collectives engine"). Internal.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace am::detail {

/// Bytes of one fingerprint record.
inline constexpr std::size_t fingerprint_bytes = 256;

/// One participant's fingerprint as it travels.
using fingerprint_record = std::array<std::byte, fingerprint_bytes>;

/// The record of step `step` with `signature`. A signature too long for the record keeps its
/// beginning and a 64-bit hash of the whole, so two that differ past the cut still differ.
fingerprint_record encode_fingerprint(std::uint64_t step, const std::string& signature);

/// What a record says: its step and signature (as encoded), or nothing for bytes that are not a
/// record (a peer of another build, or garbage).
struct decoded_fingerprint {
  std::uint64_t step = 0;
  std::string signature;
};
std::optional<decoded_fingerprint> decode_fingerprint(const std::byte* record);

/// Whether the `count` records at `records` are all the same (the common case, checked before any
/// text of a disagreement is built).
bool fingerprints_agree(const std::byte* records, std::size_t count);

/// The desync error text when the records of `processes` (one per process, in order: `records`
/// holds processes.size() records back to back) do not all equal record `mine` (this process's,
/// which it encoded itself); empty when they agree. `what` names the collective ("Collective 3 of
/// communicator 'w'"); each process's signature is followed by `suffix` (" over processes [0, 1]").
std::string fingerprint_disagreement(const std::string& what, const std::vector<int>& processes,
                                     const std::byte* records, std::size_t mine, const std::string& suffix = "");

} // namespace am::detail
