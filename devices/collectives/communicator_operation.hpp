/// What one operation of a communicator is, as its parts pass it around: how it is named, checked
/// and carried (communicator.cpp builds it from the caller's arguments, communicator_impl.cpp runs
/// it, communicator_checks.cpp checks it against the peers). Internal.
#pragma once

#include "actormesh/actors/dtype.hpp"
#include "devices/collectives/fingerprint_dissemination.hpp"
#include "devices/collectives/gloo_engine.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace am::detail {

/// "250 ms": a duration as the communicator's errors write it.
inline std::string ms_text(std::chrono::milliseconds t) {
  return std::to_string(t.count()) + " ms";
}

/// What an operation is, as the flight recorder keeps it: its name ("all_gather"), dtype and count
/// (empty for none), and the rest of its signature (" root=0"). The signature is "name dtype[count]rest".
struct operation_kind {
  std::string name;      ///< the operation ("all_gather", "send/recv", "create over processes [0, 1]")
  std::string type_name; ///< its dtype's name, empty for none
  std::string shape;     ///< "[count]", empty for none
  std::string rest;      ///< the rest of its signature (" root=0")

  /// How the errors of an agreement (a barrier, communicator::agree) name it ("Barrier 'x'");
  /// empty for the other operations.
  std::string label;

  /// An operation `n` on `count` elements of `t`, with `r` appended to its signature.
  operation_kind(std::string n, am::dtype t, std::size_t count, std::string r = "")
      : name(std::move(n)), type_name(am::name(t)), shape("[" + std::to_string(count) + "]"),
        rest(std::move(r)) {}
  /// An operation on no buffer, whose signature is `n` alone.
  explicit operation_kind(std::string n) : name(std::move(n)) {}

  /// An agreement on `signature`, moving no bytes, whose errors name it `label`.
  static operation_kind agreement(const std::string& label, const std::string& signature) {
    operation_kind kind(signature);
    kind.label = label;
    return kind;
  }

  /// What every participant must issue alike: "name dtype[count]rest", or "namerest" without a dtype.
  std::string signature() const {
    return type_name.empty() ? name + rest : name + " " + type_name + shape + rest;
  }
};

/// How an operation's participants check that they all issued it alike: after creation, by
/// exchanging fingerprints with each other (`peer_ranks` on `lane`); creation itself, before
/// there is a mesh to exchange them over, through the cluster.
struct fingerprint_check {
  bool by_cluster = true;               ///< creation: the cluster checks it
  std::vector<int> peer_ranks;          ///< the other participants' ranks
  gloo_engine::fingerprint_lane lane{}; ///< which sequence's fingerprints
};

/// One operation: how it is checked and how its bytes move.
struct operation {
  operation_kind kind;           ///< what it is (the flight recorder's fields)
  std::string signature;         ///< what every participant must issue alike
  std::string check_id;          ///< the sequence it belongs to (communicator, or a send/recv pair)
  std::uint64_t step = 0;        ///< its number in that sequence
  std::vector<int> participants; ///< process indices
  std::string where;             ///< how errors name it
  /// Moves the bytes on the worker, within the time left.
  std::function<void(std::chrono::milliseconds)> move;
  fingerprint_check check = {};       ///< how the participants check it
  std::chrono::milliseconds limit{0}; ///< its timeout, for the errors
  std::uint64_t record = 0;           ///< its flight recorder entry
  std::function<void()> prepare = {}; ///< run on the worker before the check (may be empty)

  /// How the check's errors name it ("Collective 3 of communicator 'w'", "Barrier 'x'"), and
  /// whether they are prefixed with `where` (an agreement's are not: its `where` says it cannot
  /// complete, as the supervisor's barrier errors do).
  std::string check_what = {};
  bool check_errors_in_context = true; ///< see check_what

  /// A small collective whose bytes travel with its fingerprints over the shared-memory mesh: what
  /// this rank carries and expects of each rank, and `land`, which puts the bytes of every rank
  /// (by rank) where the caller wants them. Empty `land`: the bytes go through Gloo (`move`).
  dissemination_payload carried = {};
  std::function<void(const std::vector<std::vector<std::byte>>&)> land = {}; ///< see carried
};

/// The most bytes (a rank's buffer times the ranks) a collective carries with its fingerprints over
/// the shared-memory mesh; larger ones go through Gloo (doc/performance.md).
inline constexpr std::size_t carry_limit = 256 * 1024;

/// What a small collective carries over the mesh (operation::carried and land), as its caller
/// describes it.
struct carried_bytes {
  dissemination_payload payload;                                        ///< operation::carried
  std::function<void(const std::vector<std::vector<std::byte>>&)> land; ///< operation::land
};

/// Rank `r`'s bytes among what a carried collective brought (by rank), refusing bytes that did
/// not arrive whole (`bytes` expected; a peer's malformed message).
const std::vector<std::byte>& landed_bytes(const std::vector<std::vector<std::byte>>& landed, std::size_t r,
                                           std::size_t bytes, const std::vector<int>& processes);

/// A copy of `bytes` bytes at `data`: what a carried collective sends, taken when it is issued
/// (the caller may give up, and reuse its buffer, while the worker still sends it).
std::vector<std::byte> copy_of(const void* data, std::size_t bytes);

} // namespace am::detail
