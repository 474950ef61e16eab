/// The messages between cluster clients (one per process) and the mesh supervisor. Every message
/// is made of CAF's built-in types only (atoms, integers, strings), so it crosses the network with
/// no type registration; structured payloads are byte strings of wire_codec, decoded with checks.
/// Internal.
#pragma once

#include <caf/atom.hpp>

#include <cstdint>
#include <vector>
#include <string>

namespace am::detail {

// client -> supervisor (the sender is the client actor; `process` must match it)
using join_atom = caf::atom_constant<caf::atom("am_join")>;          ///< (join_request bytes)
using heartbeat_atom = caf::atom_constant<caf::atom("am_hbeat")>;    ///< (process); echoed back
using barrier_atom = caf::atom_constant<caf::atom("am_barrier")>;    ///< (process, req, name, timeout ms)
using kv_set_atom = caf::atom_constant<caf::atom("am_kvset")>;       ///< (process, req, key, value)
using kv_get_atom = caf::atom_constant<caf::atom("am_kvget")>;       ///< (process, req, key, timeout ms)
using collective_atom = caf::atom_constant<caf::atom("am_coll")>;    ///< (process, req, check bytes)
using leave_atom = caf::atom_constant<caf::atom("am_leave")>;        ///< (process, req)
/// (process, actor): a worker's call server, which the supervisor hands the controller (before
/// the directory), in both directions.
using call_server_atom = caf::atom_constant<caf::atom("am_callsrv")>;

// supervisor -> client
using joined_atom = caf::atom_constant<caf::atom("am_joined")>;      ///< (reply bytes): directory
using reply_atom = caf::atom_constant<caf::atom("am_reply")>;        ///< (req, reply bytes)
/// (declared failures bytes): the processes declared failed since the last such message, each with
/// its notice; one message to each member per batch, however many failed at once (a host's loss).
using failed_atom = caf::atom_constant<caf::atom("am_failed")>;

// to itself
using tick_atom = caf::atom_constant<caf::atom("am_tick")>;
/// Sends the failures declared since the last batch (queued behind what the mailbox holds, so
/// the down messages of one lost host go out as one batch).
using flush_failures_atom = caf::atom_constant<caf::atom("am_flushf")>;

/// How a request ended.
enum class reply_code : std::uint8_t { ok, timeout, process_failure, desync, invalid };

/// The answer to one request: a value, or an error with its message (and, for a process failure,
/// the failed process).
struct cluster_reply {
  reply_code code = reply_code::ok;
  int process = -1;
  std::string message;
  std::string value;
};

std::string encode(const cluster_reply& r);
cluster_reply decode_reply(const std::string& bytes);

/// A collective's sequencing check as it travels.
struct collective_check {
  std::string communicator;
  std::uint64_t step = 0;
  std::vector<int> participants;
  std::string signature;
  std::int64_t timeout_ms = 0;
};

/// A process the supervisor declared failed, and the notice every member logs and reports.
struct declared_failure {
  int process = -1;
  std::string notice;
};

std::string encode(const std::vector<declared_failure>& failures);
std::vector<declared_failure> decode_failures(const std::string& bytes);

std::string encode(const collective_check& c);
collective_check decode_collective_check(const std::string& bytes);

} // namespace am::detail
