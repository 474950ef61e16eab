#include "observability/trace_collectives.hpp"

#include "observability/trace_buffer.hpp"

#include "actormesh/actors/dtype.hpp"

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace am::observability {

namespace {

struct open_op {
  std::int64_t issued_ns = 0;
  std::uint32_t track = 0;
  std::string op;
  std::string detail;
  std::int64_t step = 0;
  std::int64_t bytes = -1;
  std::int64_t peers = 0;
};

struct collectives_state {
  std::mutex mutex;
  std::unordered_map<std::uint64_t, open_op> open; ///< by flight-recorder record
  std::map<std::string, std::uint32_t> tracks;    ///< by communicator
};

collectives_state& collectives() {
  static collectives_state* s = new collectives_state;
  return *s;
}

/// Elements of "[1024]" or "[2,3]" times the dtype's size; -1 when either is not known.
std::int64_t bytes_of(const std::string& dtype_name, const std::string& shape) {
  std::int64_t size = -1;
  for (std::size_t i = 0; i < dtype_count; ++i)
    if (name(static_cast<dtype>(i)) == dtype_name)
      size = static_cast<std::int64_t>(size_of(static_cast<dtype>(i)));
  if (size < 0 || shape.empty())
    return -1;
  std::int64_t elements = 1;
  std::int64_t current = 0;
  bool digits = false;
  for (char c : shape) {
    if (c >= '0' && c <= '9') {
      if (current > (std::int64_t{1} << 50))
        return -1;
      current = current * 10 + (c - '0');
      digits = true;
    } else if (c == ',' || c == ']') {
      if (!digits)
        return c == ']' && elements == 1 ? size : -1; // "[]": a scalar
      elements *= current;
      current = 0;
      digits = false;
    }
  }
  return elements * size;
}

bool traced(const flight_recorder* recorder) {
  return tracing() && recorder == &process_flight_recorder();
}

} // namespace

void trace_collective_issued(const flight_recorder* recorder, const flight_entry& entry) noexcept {
  if (!traced(recorder))
    return;
  try {
    open_op op;
    op.issued_ns = trace_ticks();
    op.op = entry.op;
    op.step = static_cast<std::int64_t>(entry.step);
    op.bytes = bytes_of(entry.dtype, entry.shape);
    op.peers = static_cast<std::int64_t>(entry.participants.size());
    std::string peers;
    for (int p : entry.participants)
      peers += (peers.empty() ? "" : ",") + std::to_string(p);
    op.detail = entry.signature + " | communicator " + entry.communicator + " | peers [" + peers + "]";
    auto& s = collectives();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto [it, fresh] = s.tracks.try_emplace(entry.communicator, 0);
    if (fresh)
      it->second = track::collective_base + static_cast<std::uint32_t>(s.tracks.size());
    op.track = it->second;
    name_track(op.track, "collectives: " + entry.communicator);
    if (s.open.size() < 65536)
      s.open.emplace(entry.record, std::move(op));
  } catch (...) {
  }
}

void trace_collective_marked(const flight_recorder* recorder, std::uint64_t record, op_state state_now) noexcept {
  if (!traced(recorder))
    return;
  try {
    const std::int64_t now = trace_ticks();
    open_op op;
    {
      auto& s = collectives();
      std::lock_guard<std::mutex> lock(s.mutex);
      auto it = s.open.find(record);
      if (it == s.open.end())
        return;
      if (state_now == op_state::checked) {
        trace_event e;
        e.start_ns = now;
        e.track = it->second.track;
        e.category = "collective";
        e.name = "start";
        e.a_key = "step";
        e.a = it->second.step;
        observability::record(e);
        return;
      }
      op = std::move(it->second);
      s.open.erase(it);
    }
    trace_event e;
    e.start_ns = op.issued_ns;
    e.dur_ns = now - op.issued_ns;
    e.track = op.track;
    e.category = "collective";
    e.name = "collective";
    e.name_id = intern(op.op);
    e.text = intern(op.detail + (state_now == op_state::failed ? " | failed" : ""));
    e.a_key = "step";
    e.a = op.step;
    e.b_key = "peers";
    e.b = op.peers;
    if (op.bytes >= 0) {
      e.c_key = "bytes";
      e.c = op.bytes;
    }
    observability::record(e);
  } catch (...) {
  }
}

} // namespace am::observability
