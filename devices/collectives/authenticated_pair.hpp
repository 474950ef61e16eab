/// A Gloo TCP pair whose connection proves it belongs to the communicator before it counts.
///
/// Gloo's own pair (gloo 2022) listens on a port of its own and takes the first connection that
/// arrives as its peer: a stranger's bare connect or junk there took the peer's place and stalled
/// the communicator's creation on every process until its timeout. This pair keeps Gloo's wire
/// format and event loop and changes only how the connection is made:
///
/// - the lower rank of the two listens; the higher connects (Gloo compared addresses instead);
/// - every accepted connection is a candidate that must pass the guard's handshake (the
///   coordinator's, guard_protocol.hpp) under this pair's key, derived from the cluster's secret,
///   the communicator and both ranks (transport_keys.hpp); candidates run in Gloo's event loop,
///   at most `max_candidates` at once, each dropped on junk, a wrong proof, or when a newer one
///   needs its place after `candidate_deadline`;
/// - the first candidate that passes becomes the pair's connection and the others are closed;
/// - the connecting side retries until the creation's deadline when it is refused or cut off
///   (a stranger may hold the listener's places for a moment) and fails at once on a wrong proof.
/// Internal: only the collectives' transport includes it (it brings in Gloo's headers).
#pragma once

#include <gloo/transport/tcp/loop.h>
#include <gloo/transport/tcp/pair.h>

#include "cluster/guard/guard_protocol.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace am::detail {

class authenticated_pair;

/// One accepted connection in its handshake: a Handler of Gloo's loop that lives as long as its
/// pair, so that an event still queued for a dropped candidate finds a valid (idle) object.
struct pair_candidate final : gloo::transport::tcp::Handler {
  authenticated_pair* owner = nullptr;
  int fd = -1;
  std::optional<guard::server_handshake> handshake;
  std::chrono::steady_clock::time_point since{};

  void handleEvents(int events) override;
};

class authenticated_pair final : public gloo::transport::tcp::Pair {
public:
  /// How many accepted connections may be in their handshake at once.
  static constexpr std::size_t max_candidates = 16;
  /// After this long in its handshake, a candidate gives its place to a newer one.
  static constexpr std::chrono::seconds candidate_deadline{1};
  /// The longest one connection attempt of the connecting side waits.
  static constexpr std::chrono::seconds attempt_deadline{2};

  /// The pair between `self_rank` and `peer_rank` of `context`; `key` is what both sides prove.
  authenticated_pair(gloo::transport::tcp::Context* context, gloo::transport::tcp::Device* device, int self_rank,
                     int peer_rank, std::chrono::milliseconds timeout, std::string key);
  ~authenticated_pair() override;

  /// The listening side waits for a candidate to pass; the connecting side connects, proves the
  /// key and hands the socket to Gloo. Throws gloo::IoException as Gloo's own pair does.
  void connect(const std::vector<char>& bytes) override;

  void handleEvents(int events) override;

  /// A candidate's socket is readable (Gloo's loop thread).
  void on_candidate(pair_candidate& candidate);

private:
  // Each of these is called with m_ held.
  void accept_candidates();
  pair_candidate* free_candidate();
  void drop(pair_candidate& candidate);
  void drop_all();
  void admit(pair_candidate& candidate);
  /// Gives the connected socket in fd_ to Gloo (handleConnected); when that throws (the peer reset
  /// the connection meanwhile: Gloo enforces getpeername), fails the pair with the reason instead,
  /// since a throw on Gloo's loop thread would end the process. Whether the pair is connected.
  bool hand_to_gloo();
  void close_listener();

  const int peer_rank_;
  const bool listens_;
  const std::string key_;
  /// Set once a candidate became the connection: events then go straight to Gloo's own handler.
  std::atomic<bool> admitted_{false};
  std::array<pair_candidate, max_candidates> candidates_;
};

} // namespace am::detail
