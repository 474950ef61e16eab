/// The load that `actormesh stress` and the colocated stress tests run: T threads, each issuing N
/// rounds of colocated function calls, method calls on an object of its own and on one object all
/// threads share, and array operations, with every result checked against its issue order.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace am::tools {

/// What one stress run does.
struct stress_config {
  /// Caller threads, 1..1024.
  int threads = 4;
  /// Rounds per thread, 1..999999: each round is one call of every kind in the mix.
  int calls = 1000;
  /// Colocated function calls and method calls (own and shared object) in each round.
  bool colocated = true;
  /// Array operations (device_put, an add on a running sum) in each round.
  bool arrays = true;
  /// Rounds each thread keeps in flight before it waits for the oldest.
  int window = 8;
};

/// What a stress run measured.
struct stress_report {
  /// Rounds completed over all threads.
  std::int64_t rounds = 0;
  /// Calls issued over all threads (each round issues one per kind in the mix).
  std::int64_t calls = 0;
  /// Wall time of the run, seconds.
  double seconds = 0;
  /// Latency of a round, microseconds: from its first call to seeing all its outputs ready (with
  /// `window` rounds in flight per thread, so it includes waiting behind that thread's earlier rounds).
  double p50_us = 0;
  double p99_us = 0;
  /// Results that show a call ran out of its thread's issue order (must be 0).
  int violations = 0;
  /// Failed calls and lifecycle mismatches (instances not created or destroyed once each).
  int errors = 0;
  /// The first few errors and violations, as text.
  std::vector<std::string> messages;
};

/// Checks `config` (am::value_error with the bad field's name and range).
void check_stress_config(const stress_config& config);

/// Runs the mix on the current runtime's devices (thread t on device t mod the device count) and
/// returns what it saw. Each result is checked on this side; the function's own log of what it saw
/// and the objects' construction and destruction counts are checked too when every device is in
/// this process (they are kept where the bodies run). `progress(done_rounds, total_rounds)` is called from this thread about 10
/// times a second and once at the end. One run at a time per process (a second one throws
/// am::runtime_error); the runtime must outlive the call.
stress_report run_stress_mix(const stress_config& config,
                             const std::function<void(std::int64_t, std::int64_t)>& progress = {});

} // namespace am::tools
