#include "cluster/guard/frame_check.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/io/basp/header.hpp>
#include <caf/io/basp/message_type.hpp>

#include <string>

namespace am::detail::guard {

namespace {

using caf::io::basp::message_type;

std::string op_name(std::uint8_t op) {
  switch (static_cast<message_type>(op)) {
    case message_type::server_handshake:
      return "server handshake";
    case message_type::client_handshake:
      return "client handshake";
    case message_type::direct_message:
      return "direct message";
    case message_type::routed_message:
      return "routed message";
    case message_type::monitor_message:
      return "monitor message";
    case message_type::down_message:
      return "down message";
    case message_type::heartbeat:
      return "heartbeat";
  }
  return "operation " + std::to_string(op);
}

} // namespace

bool node_bindings::claim(const caf::node_id& node) {
  std::lock_guard<std::mutex> lock(mutex_);
  return bound_.insert(node).second;
}

void node_bindings::release(const caf::node_id& node) {
  std::lock_guard<std::mutex> lock(mutex_);
  bound_.erase(node);
}

frame_check::frame_check(peer kind, std::uint64_t max_payload, caf::node_id this_node,
                         std::shared_ptr<node_bindings> bindings)
  : kind_(kind), max_payload_(max_payload), this_node_(std::move(this_node)), bindings_(std::move(bindings)) {}

frame_check::~frame_check() {
  if (claimed_ && bindings_)
    bindings_->release(node_);
}

std::string frame_check::next(const char* data, std::size_t size) {
  return expects_header() ? on_header(data, size) : on_payload(data, size);
}

std::string frame_check::on_header(const char* data, std::size_t size) {
  if (size != caf::io::basp::header_size)
    return "a frame header of " + std::to_string(size) + " bytes (CAF's are 32)";
  caf::io::basp::header hdr;
  caf::binary_deserializer source{nullptr, data, size};
  if (auto err = source(hdr); err || !caf::io::basp::valid(hdr))
    return "a malformed frame header";
  auto op = static_cast<std::uint8_t>(hdr.operation);
  if (hdr.payload_len > max_payload_)
    return "a " + op_name(op) + " frame claims " + std::to_string(hdr.payload_len) + " bytes, over the limit of "
           + std::to_string(max_payload_) + " (AM_MAX_FRAME_BYTES)";
  if (kind_ == peer::member) {
    if (hdr.operation == message_type::server_handshake)
      return "a server handshake from a connecting process";
    if (!claimed_ && hdr.operation != message_type::client_handshake)
      return "a " + op_name(op) + " before its handshake";
  }
  operation_ = op;
  payload_wanted_ = hdr.payload_len;
  return {};
}

std::string frame_check::on_payload(const char* data, std::size_t size) {
  if (size != payload_wanted_)
    return "a payload of " + std::to_string(size) + " bytes where its header announced "
           + std::to_string(payload_wanted_);
  payload_wanted_ = 0;
  if (kind_ != peer::member)
    return {};
  auto op = static_cast<message_type>(operation_);
  bool names_source = op == message_type::client_handshake || op == message_type::routed_message
                      || op == message_type::monitor_message || op == message_type::down_message;
  if (!names_source)
    return {};
  caf::node_id source_node;
  caf::binary_deserializer source{nullptr, data, size};
  if (auto err = source(source_node); err || !source_node)
    return "a " + op_name(operation_) + " that names no valid source node";
  if (op == message_type::client_handshake) {
    if (claimed_)
      return source_node == node_ ? std::string{}
                                  : "a second handshake naming another node (" + to_string(source_node) + ")";
    if (source_node == this_node_)
      return "a handshake claiming this process's own node";
    if (!bindings_ || !bindings_->claim(source_node))
      return "a handshake claiming node " + to_string(source_node) + ", which another connection holds";
    node_ = source_node;
    claimed_ = true;
    return {};
  }
  if (source_node != node_)
    return "a " + op_name(operation_) + " claiming to come from node " + to_string(source_node)
           + " on the connection of node " + to_string(node_);
  return {};
}

} // namespace am::detail::guard
