#include "observability/trace_clock.hpp"

#include "actors/cluster_services.hpp"
#include "actors/detail/log.hpp"

#include <chrono>
#include <exception>
#include <limits>
#include <string>

namespace am::observability {

namespace {

/// How long one step of the exchange waits for the other process (a process whose trace is off
/// never answers; the start then waits this long, once, for it).
constexpr std::chrono::milliseconds step_timeout{10000};

std::string key(const char* what, int process, int round) {
  return std::string("am.trace.clock.") + what + "." + std::to_string(process) + "." + std::to_string(round);
}

} // namespace

void measure_trace_clock(detail::cluster_services& cluster, std::int64_t local_origin_ns, trace_process_info& info) {
  info.offset_ns = 0;
  info.rtt_ns = 0;
  info.origin_ns = local_origin_ns;
  const int me = cluster.process_index();
  const int n = cluster.process_count();
  try {
    if (me == 0) {
      cluster.kv_set("am.trace.clock.origin", std::to_string(local_origin_ns));
      for (int p = 1; p < n; ++p) {
        try {
          for (int r = 0; r < trace_clock_rounds; ++r) {
            (void)cluster.kv_get(key("ping", p, r), step_timeout);
            cluster.kv_set(key("pong", p, r), std::to_string(trace_clock_ns()));
          }
        } catch (const std::exception& e) {
          detail::log(detail::log_level::warning, "trace: process {} did not measure its clock offset: {}", p,
                      e.what());
        }
      }
      info.clock_note = "process 0: the reference clock";
      return;
    }
    info.origin_ns = std::stoll(cluster.kv_get("am.trace.clock.origin", step_timeout));
    std::int64_t best_rtt = std::numeric_limits<std::int64_t>::max();
    for (int r = 0; r < trace_clock_rounds; ++r) {
      const std::int64_t sent = trace_clock_ns();
      cluster.kv_set(key("ping", me, r), std::to_string(sent));
      const std::int64_t theirs = std::stoll(cluster.kv_get(key("pong", me, r), step_timeout));
      const std::int64_t back = trace_clock_ns();
      if (back - sent < best_rtt) {
        best_rtt = back - sent;
        info.offset_ns = theirs - (sent + back) / 2;
      }
    }
    info.rtt_ns = best_rtt;
    info.clock_note = "measured through the supervisor: best of " + std::to_string(trace_clock_rounds)
                      + " round trips, error at most rtt/2";
  } catch (const std::exception& e) {
    info.offset_ns = 0;
    info.rtt_ns = 0;
    info.clock_note = std::string("not measured (offset taken as 0): ") + e.what();
    detail::log(detail::log_level::warning, "trace: the clock offset to process 0 was not measured: {}", e.what());
  }
}

} // namespace am::observability
