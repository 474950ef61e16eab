/// The runtime's counters read without rates: what am::runtime_stats() builds its snapshot from,
/// and what the metrics endpoint (devices/metrics_endpoint.hpp) serves, so that a scrape never
/// moves the window of the rates a program's own runtime_stats() calls see. Internal.
#pragma once

#include "actormesh/observability/runtime_stats.hpp"

#include <cstdint>
#include <vector>

namespace am::detail {

class runtime_context;

/// The counters of a runtime at one moment, and when each device actor started.
struct runtime_counters {
  runtime_stats_snapshot snapshot; ///< every field but the rates and interval_seconds, which stay 0
  std::vector<std::int64_t> device_started_ns; ///< per snapshot.devices entry: its actor's start (steady clock)
};

/// The counters of `rt` now. Thread-safe.
runtime_counters read_runtime_counters(const runtime_context& rt);

} // namespace am::detail
