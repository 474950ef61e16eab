#include "observability/trace_hooks.hpp"

#include "actormesh/actors/device_info.hpp"
#include "actormesh/actors/lane.hpp"
#include "actormesh/actors/program.hpp"

#include <string>
#include <unordered_map>
#include <utility>

namespace am::observability {

namespace {

/// Names a device's track once per thread.
std::uint32_t device_track(const device& d) noexcept {
  const std::uint32_t id = track::device_base + static_cast<std::uint32_t>(d.id);
  try {
    thread_local std::uint32_t named = 0;
    if (named != id + 1) {
      name_track(id, "device " + to_string(d));
      named = id + 1;
    }
  } catch (...) {
  }
  return id;
}

std::string type_text(const value_type& t) {
  return std::string(name(t.dtype)) + shape_to_string(t.shape);
}

/// What a device program's span shows: the operation's interned name, the stage of its plan
/// (-1: not a plan's), and its "in: float32[4,4] float32[4] -> out: float32[4,4]" detail.
struct program_labels {
  std::uint32_t name = 0;
  std::uint32_t text = 0;
  std::int64_t stage = -1;
};

/// A per-shard program is named "<operation>.s<stage>.d<device>" (sharding/detail/lowering_state.cpp):
/// the operation alone names its spans, so that every device's copy of one operation shares a name
/// (and a colour in Perfetto), and the stage goes to the arguments. Other names stay whole.
std::pair<std::string, std::int64_t> operation_and_stage(const std::string& name) {
  const auto d = name.rfind(".d");
  const auto s = d == std::string::npos || d == 0 ? std::string::npos : name.rfind(".s", d - 1);
  auto digits = [&](std::size_t from, std::size_t to) {
    if (from >= to)
      return false;
    for (auto i = from; i < to; ++i)
      if (name[i] < '0' || name[i] > '9')
        return false;
    return true;
  };
  constexpr std::size_t most_stage_digits = 9; // std::stoll below never overflows
  if (s == std::string::npos || s == 0 || !digits(s + 2, d) || !digits(d + 2, name.size())
      || d - (s + 2) > most_stage_digits)
    return {name, -1};
  return {name.substr(0, s), std::stoll(name.substr(s + 2, d - s - 2))};
}

/// A program's labels, built once per program, thread and session (the program is held while it
/// is known here, so that its address is not reused meanwhile).
program_labels program_texts(const std::shared_ptr<const program>& p) noexcept {
  struct known {
    std::shared_ptr<const program> held;
    program_labels labels;
  };
  try {
    thread_local std::unordered_map<const program*, known> memo;
    thread_local std::uint64_t memo_session = 0;
    const auto session = trace_session();
    if (memo_session != session || memo.size() > 4096) {
      memo.clear();
      memo_session = session;
    }
    if (auto it = memo.find(p.get()); it != memo.end())
      return it->second.labels;
    std::string text = "in:";
    for (auto& t : p->input_types())
      text += " " + type_text(t);
    text += " -> out:";
    for (auto& t : p->output_types())
      text += " " + type_text(t);
    auto [operation, stage] = operation_and_stage(p->name);
    known k{p, {operation.empty() ? 0 : intern(operation), intern(text), stage}};
    memo.emplace(p.get(), k);
    return k.labels;
  } catch (...) {
    return {};
  }
}

} // namespace

trace_span::trace_span(std::uint32_t track, const char* category, const char* name) noexcept {
  if (!tracing())
    return;
  active_ = true;
  e_.track = track;
  e_.category = category;
  e_.name = name;
  e_.start_ns = trace_ticks();
}

trace_span::~trace_span() {
  if (!active_)
    return;
  e_.dur_ns = trace_ticks() - e_.start_ns;
  record(e_);
}

void trace_span::arg(const char* key, std::int64_t value) noexcept {
  if (!active_)
    return;
  if (e_.a_key == nullptr) {
    e_.a_key = key;
    e_.a = value;
  } else if (e_.b_key == nullptr) {
    e_.b_key = key;
    e_.b = value;
  } else {
    e_.c_key = key;
    e_.c = value;
  }
}

trace_span program_span(const device& d, const std::shared_ptr<const program>& p) noexcept {
  trace_span s(device_track(d), "device", "program");
  if (s.active() && p) {
    const auto labels = program_texts(p);
    s.event().name_id = labels.name;
    s.event().text = labels.text;
    s.arg("device", d.id);
    if (labels.stage >= 0)
      s.arg("stage", labels.stage);
  }
  return s;
}

std::uint64_t call_flow_id(const device& d, const call_header& h) noexcept {
  // splitmix64's finalizer over the three parts: distinct calls get distinct ids but by chance.
  auto mix = [](std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  };
  const std::uint64_t id = mix(mix(mix(static_cast<std::uint64_t>(d.id)) ^ h.caller) ^ h.seq);
  return id == 0 ? 1 : id; // 0 means "no arrow"
}

trace_span dispatch_span(const char* name, const std::shared_ptr<const program>* code) noexcept {
  trace_span s(this_thread_track(), "call", name);
  if (s.active() && code != nullptr && *code)
    s.event().text = program_texts(*code).name;
  return s;
}

trace_span upload_span(const device& d, const value_type& type) noexcept {
  trace_span s(device_track(d), "device", "upload");
  if (s.active()) {
    try {
      s.event().text = intern(type_text(type));
    } catch (...) {
    }
  }
  return s;
}

trace_span fetch_span(const device& d) noexcept {
  return trace_span(device_track(d), "device", "fetch");
}

namespace trace_detail {

void record_lane(const device& d, const char* what, std::uint64_t caller) noexcept {
  trace_event e;
  e.start_ns = trace_ticks();
  e.track = device_track(d);
  e.category = "lane";
  e.name = what;
  e.a_key = "caller";
  e.a = static_cast<std::int64_t>(caller);
  record(e);
}

void record_send(const device& d) noexcept {
  thread_local bool named = false;
  if (!named) {
    named = true;
    try {
      name_this_thread("caller " + std::to_string(this_caller()));
    } catch (...) {
    }
  }
  trace_event e;
  e.start_ns = trace_ticks();
  e.track = this_thread_track();
  e.category = "lane";
  e.name = "send";
  e.a_key = "device";
  e.a = d.id;
  record(e);
}

} // namespace trace_detail

trace_span host_task_span(std::uint64_t caller) noexcept {
  if (!tracing())
    return {};
  try {
    name_this_thread("host lane (caller " + std::to_string(caller) + ")");
  } catch (...) {
  }
  trace_span s(this_thread_track(), "host", "host task");
  s.arg("caller", static_cast<std::int64_t>(caller));
  return s;
}

trace_span colocated_span(std::string_view function, const char* where) noexcept {
  if (!tracing())
    return {};
  trace_span s(this_thread_track(), "colocated", where);
  if (s.active())
    s.event().text = intern(function);
  return s;
}

trace_span transfer_span(const char* what, int peer) noexcept {
  if (!tracing())
    return {};
  try {
    name_this_thread("shard transfers");
  } catch (...) {
  }
  trace_span s(this_thread_track(), "transfer", what);
  s.arg("peer", peer);
  return s;
}

} // namespace am::observability
