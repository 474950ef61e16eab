/// Checks every CAF (BASP) frame a peer sends before CAF's broker sees it: the 32-byte header
/// first (a valid operation, a payload no larger than the limit), then the payload of the frames
/// that name a node. A connection is bound to the node its first client handshake names; after
/// that, a routed, monitor or down message must come from that node, and no other connection may
/// claim it. This is what stops a peer from speaking for another member: CAF 0.17 takes a routed
/// message's source from the frame itself. Free of sockets and actors, so it can be fuzzed. Internal.
#pragma once

#include <caf/node_id.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace am::detail::guard {

/// The nodes bound to a live connection of one listener, so that a node is claimed once. Shared by
/// the listener's connections; any thread.
class node_bindings {
public:
  /// Binds `node` if nobody holds it; returns whether it did.
  bool claim(const caf::node_id& node);
  /// Frees a node when its connection ends.
  void release(const caf::node_id& node);

private:
  std::mutex mutex_;
  std::set<caf::node_id> bound_;
};

/// One connection's frames, in the order CAF reads them: header, payload (when it has one), header...
class frame_check {
public:
  /// What the connection's peer is: `member` connections (accepted by the coordinator) are bound
  /// to one node; a `coordinator` connection (a member's own, to an authenticated coordinator)
  /// relays other members' messages, so only sizes are checked.
  enum class peer { member, coordinator };

  /// `bindings` may be null for a coordinator connection. `this_node` is this process's node (a
  /// member may not claim it).
  frame_check(peer kind, std::uint64_t max_payload, caf::node_id this_node, std::shared_ptr<node_bindings> bindings);
  ~frame_check();
  frame_check(const frame_check&) = delete;
  frame_check& operator=(const frame_check&) = delete;

  /// Checks the next frame piece, exactly as CAF asked for it (a header of 32 bytes or the whole
  /// payload its header announced). Returns an empty string if it passes, otherwise why not (the
  /// connection must then be closed).
  std::string next(const char* data, std::size_t size);

  /// True when the next piece is a header.
  bool expects_header() const noexcept { return payload_wanted_ == 0; }
  /// The node this connection is bound to (none until its handshake).
  const caf::node_id& bound_node() const noexcept { return node_; }

private:
  std::string on_header(const char* data, std::size_t size);
  std::string on_payload(const char* data, std::size_t size);

  peer kind_;
  std::uint64_t max_payload_;
  caf::node_id this_node_;
  std::shared_ptr<node_bindings> bindings_;
  caf::node_id node_;
  bool claimed_ = false;
  std::uint8_t operation_ = 0;
  std::uint32_t payload_wanted_ = 0;
};

} // namespace am::detail::guard
