#include "actormesh/observability/trace.hpp"

#include "observability/trace_buffer.hpp"
#include "observability/trace_session.hpp"

namespace am {

trace_scope::trace_scope(std::string_view name) noexcept {
  if (!observability::tracing())
    return;
  name_ = observability::intern(name);
  track_ = observability::this_thread_track();
  session_ = observability::trace_session();
  active_ = true;
  start_ns_ = observability::trace_ticks();
}

trace_scope::~trace_scope() {
  if (!active_ || observability::trace_session() != session_)
    return; // a scope that began in an earlier session is not this one's
  observability::trace_event e;
  e.start_ns = start_ns_;
  e.dur_ns = observability::trace_ticks() - start_ns_;
  e.track = track_;
  e.category = "user";
  e.name = "scope";
  e.name_id = name_;
  observability::record(e);
}

bool trace_enabled() noexcept {
  return observability::tracing();
}

void start_trace(const std::string& path) {
  observability::code_trace_start(path);
}

std::string stop_trace() {
  return observability::code_trace_stop();
}

void start_trace(const std::string& path, const trace_schedule& schedule) {
  observability::code_trace_start(path, schedule);
}

std::string trace_step() {
  return observability::code_trace_step();
}

} // namespace am
