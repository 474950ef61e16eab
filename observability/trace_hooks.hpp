/// The trace hooks the runtime calls: each is one line at its site, and costs one
/// relaxed load and a predictable branch while no trace is recorded. Where they sit:
///   devices/detail/device_actor.cpp   device programs, uploads, fetches; admit, stall, resume
///   devices/detail/actor_endpoint.cpp  dispatch spans and lane sends (a take message to a device)
///   devices/detail/host_actor.cpp      host-lane tasks
///   colocated/                        colocated calls (caller side) and bodies (where they run)
///   devices/collectives/shard_transfers.cpp  shard transfers between processes
///   observability/flight_recorder.cpp collectives and barriers (the flight recorder's own hooks)
/// Internal.
#pragma once

#include "actormesh/actors/lane.hpp"
#include "observability/trace_buffer.hpp"

#include <cstdint>
#include <memory>
#include <string_view>
#include <type_traits>
#include <variant>

namespace am {
struct device;
struct program;
struct value_type;
} // namespace am

namespace am::observability {

/// A complete event that records itself when it ends, if a trace was recording when it began.
class trace_span {
public:
  trace_span() noexcept = default;
  /// Starts a span named by the literal `name` on `track`.
  trace_span(std::uint32_t track, const char* category, const char* name) noexcept;
  ~trace_span();
  trace_span(trace_span&& other) noexcept : e_(other.e_), active_(other.active_) { other.active_ = false; }
  trace_span& operator=(trace_span&&) = delete;

  /// Whether the span will be recorded.
  bool active() const noexcept { return active_; }
  /// The event being built (to add arguments while active).
  trace_event& event() noexcept { return e_; }
  /// Sets a numeric argument (at most three: a, b, c in that order).
  void arg(const char* key, std::int64_t value) noexcept;

private:
  trace_event e_;
  bool active_ = false;
};

/// A device program's span on the device's track: its name, and its shard shapes as the detail.
trace_span program_span(const device& d, const std::shared_ptr<const program>& p) noexcept;
/// An upload's span on the device's track.
trace_span upload_span(const device& d, const value_type& type) noexcept;
/// A fetch's span on the device's track.
trace_span fetch_span(const device& d) noexcept;

/// The id of the arrow from the caller's dispatch span of call `h` to device `device`'s span that
/// runs it: both ends know the call's header and the device, so nothing more travels with the call.
std::uint64_t call_flow_id(const device& d, const call_header& h) noexcept;

/// The span of one piece of device work (a program, upload or fetch call of devices/detail), where
/// the arrow of call `h` from its caller ends.
template <class Work>
trace_span device_work_span(const device& d, const Work& work, const call_header& h) noexcept {
  if (!tracing())
    return {};
  auto span = std::visit(
    [&](const auto& call) -> trace_span {
      if constexpr (requires { call.code; })
        return program_span(d, call.code);
      else if constexpr (requires { call.type; })
        return upload_span(d, call.type);
      else
        return fetch_span(d);
    },
    work);
  if (span.active()) {
    span.event().flow = call_flow_id(d, h);
    span.event().flow_end = true;
  }
  return span;
}

/// The caller's span around queueing a device call, on the calling thread's track: `name` is
/// "dispatch" (a program, its operation's name as the detail), "dispatch upload" or "dispatch
/// fetch". Once the call is queued, starts_flow() starts its arrow to the device's span.
trace_span dispatch_span(const char* name, const std::shared_ptr<const program>* code) noexcept;

/// The dispatch span of one piece of device work.
template <class Work>
trace_span device_dispatch_span(const Work& work) noexcept {
  if (!tracing())
    return {};
  return std::visit(
    [&](const auto& call) -> trace_span {
      if constexpr (requires { call.code; })
        return dispatch_span("dispatch", &call.code);
      else if constexpr (requires { call.type; })
        return dispatch_span("dispatch upload", nullptr);
      else
        return dispatch_span("dispatch fetch", nullptr);
    },
    work);
}

/// Starts, at `dispatch`, the arrow of call `h` (queued for device `d`).
inline void starts_flow(trace_span& dispatch, const device& d, const call_header& h) noexcept {
  if (dispatch.active())
    dispatch.event().flow = call_flow_id(d, h);
}

namespace trace_detail {
void record_lane(const device& d, const char* what, std::uint64_t caller) noexcept;
void record_send(const device& d) noexcept;
} // namespace trace_detail

/// A lane event at a device ("admit", "stall", "resume"), an instant on the device's track.
inline void trace_lane(const device& d, const char* what, std::uint64_t caller) noexcept {
  if (tracing())
    trace_detail::record_lane(d, what, caller);
}

/// A lane message sent to a device (the take message of a caller's outbox), an instant on the
/// calling thread's track.
inline void trace_send(const device& d) noexcept {
  if (tracing())
    trace_detail::record_send(d);
}

/// A host-lane task's span on the lane worker's thread (named after its caller).
trace_span host_task_span(std::uint64_t caller) noexcept;

/// A colocated call's span: on the calling thread (`where` "call"), or its body where it runs
/// (`where` "body"), named after the function.
trace_span colocated_span(std::string_view function, const char* where) noexcept;

/// A shard transfer's span on the transfer lane's thread: `what` "send" or "receive", `peer` the
/// other process. Add the bytes with arg("bytes", n).
trace_span transfer_span(const char* what, int peer) noexcept;

} // namespace am::observability
