/// The messages of the lanes: what user threads send to device actors and to the host actor.
/// Internal: users go through the runtime's functions, never through these types.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/future.hpp"
#include "actormesh/actors/lane.hpp"
#include "actors/detail/lane_outbox.hpp"
#include "actormesh/actors/program.hpp"

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <variant>
#include <vector>

namespace am::detail {

/// Run a program over input shards; resolve one promise per program output.
struct program_call {
  std::shared_ptr<const program> code;
  std::vector<shard_future> inputs;
  std::vector<promise<buffer_ref>> outputs;
};

/// Copy host bytes into a new buffer on the device: `bytes`, or, when `write` is set, what it writes
/// (on the device's thread, straight into the buffer's memory when the host can reach it).
struct upload_call {
  std::shared_ptr<const std::vector<std::byte>> bytes;
  value_type type;
  promise<buffer_ref> output;
  buffer_writer write;
};

/// Copy a buffer's bytes back to the host, ordered after the calls before it on the device.
struct fetch_call {
  shard_future input;
  promise<std::vector<std::byte>> output;
};

/// The body of a device lane message.
using device_work = std::variant<program_call, upload_call, fetch_call>;

/// One call to a device actor: who called, in which order, and what to do. Calls travel in their
/// caller's outbox (device_batch), not as messages of their own.
struct device_call {
  call_header header;
  device_work work;
};

/// The queue of one caller's calls to one device.
using device_outbox = lane_outbox<device_call>;

/// A message to a device actor: take the calls queued in this caller's outbox.
struct device_batch {
  std::shared_ptr<device_outbox> outbox;
};

/// A message to the host actor: a task run in its caller's lane. The task resolves its own promise
/// (the typed wrapper is built on the caller side) and must not throw.
struct host_call {
  call_header header;
  std::function<void()> task;
};

/// A message to the host actor: the lane worker of `caller`, spawned when it has none yet. A local
/// thread asks once and then sends its host_calls straight to that worker (one actor hop less per
/// call; a thread's sends to one actor arrive in order, so no sequence check is needed there).
struct host_lane_request {
  caller_id caller = 0;
  promise<caf::actor> lane;
};

/// A message to the host actor: caller `caller` is gone (its thread ended, or the controller thread
/// a worker's lane stood for did), so its lane worker stops once it has run the tasks it already
/// has, and the host actor forgets it.
struct host_lane_retire {
  caller_id caller = 0;
};

/// Sent by a device actor to itself, with a caller id, when an input that caller's stalled work
/// waits for (from another device) is ready.
using resume_atom = caf::atom_constant<caf::atom("resume")>;

/// Sent to a device actor when asynchronous work (a CUDA stream) behind a token has finished.
using completed_atom = caf::atom_constant<caf::atom("completed")>;

} // namespace am::detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(am::detail::device_batch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(am::detail::host_call)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(am::detail::host_lane_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(am::detail::host_lane_retire)
