/// While a trace is recorded, a thread of its own samples the runtime's live counters into it as
/// counter tracks (each device's queue depth, the host lanes' queued tasks, the bytes of shard
/// transfers in flight), recording a sample when a value changes, and every few seconds hands the
/// session a chance to write what it holds so far, so that a process killed later leaves its trace
/// up to then. Internal: observability/trace_session.cpp owns one per session.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace am::observability {

/// How often the sampler looks at the counters (AM_TRACE_COUNTER_MS, default 10 ms; 0: no counter
/// tracks) and how often it asks for a flush (AM_TRACE_FLUSH_SECONDS, default 10 s; 0: only at stop).
struct sampler_settings {
  std::chrono::milliseconds counter_interval{10};
  std::chrono::milliseconds flush_interval{10000};
};

/// The settings from the environment, with a warning for a value that is not a count (the
/// default is kept then).
sampler_settings sampler_settings_from_environment();

/// The sampling thread of one session. Started by the constructor (no thread when both intervals
/// are 0), joined by stop() or the destructor.
class trace_sampler {
public:
  /// `flush` is called on the sampler's thread every flush interval; it must not wait for the
  /// thread that stops the sampler (the session calls it with try_lock).
  trace_sampler(sampler_settings settings, std::function<void()> flush);
  ~trace_sampler();
  trace_sampler(const trace_sampler&) = delete;
  trace_sampler& operator=(const trace_sampler&) = delete;

  /// Stops and joins the thread (at once: it waits on a condition, not a sleep). Idempotent.
  void stop();

private:
  void run();

  sampler_settings settings_;
  std::function<void()> flush_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace am::observability
