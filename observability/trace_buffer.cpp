#include "observability/trace_buffer.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>

namespace am::observability {

namespace {

constexpr std::size_t chunk_events = 4096;
/// A thread's own ceiling (4M events), whatever the process budget says.
constexpr std::size_t max_chunks_per_thread = 1024;
/// The bytes of interned strings one thread may hold in a session.
constexpr std::size_t max_string_bytes = 16u << 20;
/// In a ring, the oldest events of a thread that has wrapped which collect() leaves out: a thread
/// that passed its tracing() check just before the recording stopped may still write a few events,
/// over the oldest slots, while they are read.
constexpr std::size_t ring_read_margin = 16;

struct string_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

/// One thread's events. The owner writes events and then publishes the count (release); a reader
/// reads the count (acquire) and the events below it. A new session is noticed, and the buffer
/// reset, by its owner only.
struct thread_buffer {
  explicit thread_buffer(std::uint32_t number) : number(number) {}
  ~thread_buffer() {
    for (auto* c : chunks)
      delete[] c;
  }

  const std::uint32_t number;
  std::atomic<std::uint64_t> session{0};
  std::atomic<std::size_t> count{0};
  std::atomic<std::uint64_t> dropped{0};
  /// In a ring, the slots this thread writes round once its budget ran out (0: it has not wrapped).
  std::atomic<std::size_t> ring_slots{0};
  std::atomic<bool> orphaned{false};
  trace_event* chunks[max_chunks_per_thread] = {};
  std::size_t charged = 0; ///< chunks charged to this session's budget (owner only)

  std::mutex strings_mutex; ///< the owner appends under it, a reader reads under it
  std::vector<std::string> strings;
  std::size_t string_bytes = 0;
  std::unordered_map<std::string, std::uint32_t, string_hash, std::equal_to<>> string_ids; ///< owner only
  std::vector<std::uint32_t> named_here;  ///< tracks this thread has named (owner only)
  bool thread_named = false;              ///< owner only
};

struct registry {
  std::mutex mutex;
  std::vector<std::shared_ptr<thread_buffer>> buffers;
  std::map<std::uint32_t, std::string> track_names;
  std::uint32_t next_thread = 0;
  std::atomic<std::uint64_t> session{0};
  std::atomic<std::size_t> chunks_used{0};
  std::atomic<std::size_t> chunk_budget{0};
  std::atomic<bool> ring{false}; ///< this session's when_full is a ring
  std::int64_t calibration_ticks = 0; ///< a (ticks, ns) pair read at the first session's start:
  std::int64_t calibration_ns = 0;    ///< with one read at collection, ticks map to nanoseconds
};

registry& reg() {
  static registry* r = new registry; // never destroyed: threads may record while the process exits
  return *r;
}

struct buffer_holder {
  std::shared_ptr<thread_buffer> buffer;
  ~buffer_holder() {
    if (buffer)
      buffer->orphaned.store(true, std::memory_order_release);
  }
};

thread_local buffer_holder holder;

/// The hot path's view of this thread's buffer: trivially constructed, in the initial-exec TLS
/// model (one instruction to reach, no lazy-init call), unlike the holder that owns the buffer.
struct fast_view {
  thread_buffer* buffer;
  std::uint64_t session;
  bool gone; ///< the thread is ending: its holder is destroyed
};
thread_local fast_view fast __attribute__((tls_model("initial-exec"))) = {nullptr, 0, false};

struct holder_guard {
  ~holder_guard() {
    fast.gone = true;
    fast.buffer = nullptr;
  }
};

/// Creates this thread's buffer, or resets it for a new session; null while the thread is ending.
thread_buffer* slow_buffer(std::uint64_t session) noexcept {
  if (fast.gone)
    return nullptr;
  if (!holder.buffer) {
    thread_local holder_guard guard; // destroyed before the holder (constructed after it)
    (void)guard;
    try {
      auto& r = reg();
      std::lock_guard<std::mutex> lock(r.mutex);
      auto b = std::make_shared<thread_buffer>(++r.next_thread);
      r.buffers.push_back(b);
      r.track_names.emplace(track::thread_base + b->number, "thread " + std::to_string(b->number));
      holder.buffer = std::move(b);
    } catch (...) {
      return nullptr;
    }
  }
  auto* b = holder.buffer.get();
  if (b->session.load(std::memory_order_relaxed) != session) {
    // A new session: this thread forgets the last one's events and strings.
    b->count.store(0, std::memory_order_relaxed);
    b->dropped.store(0, std::memory_order_relaxed);
    b->ring_slots.store(0, std::memory_order_relaxed);
    b->charged = 0;
    {
      std::lock_guard<std::mutex> lock(b->strings_mutex);
      b->strings.clear();
      b->string_bytes = 0;
    }
    b->string_ids.clear();
    b->session.store(session, std::memory_order_release);
  }
  fast.buffer = b;
  fast.session = session;
  return b;
}

/// This thread's buffer for the current session, created on first use; null while the thread ends.
inline thread_buffer* local_buffer() noexcept {
  const auto session = reg().session.load(std::memory_order_acquire);
  if (fast.buffer != nullptr && fast.session == session) [[likely]]
    return fast.buffer;
  return slow_buffer(session);
}

/// Takes one chunk from the process budget.
bool charge_chunk() noexcept {
  auto& r = reg();
  if (r.chunks_used.load(std::memory_order_relaxed) >= r.chunk_budget.load(std::memory_order_relaxed))
    return false;
  return r.chunks_used.fetch_add(1, std::memory_order_relaxed) < r.chunk_budget.load(std::memory_order_relaxed);
}

} // namespace

std::int64_t trace_clock_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

void record(const trace_event& e) noexcept {
  auto* b = local_buffer();
  if (b == nullptr)
    return;
  const std::size_t n = b->count.load(std::memory_order_relaxed);
  if (const std::size_t round = b->ring_slots.load(std::memory_order_relaxed); round != 0) {
    const std::size_t i = n % round; // a ring that has wrapped: over the oldest event
    b->chunks[i / chunk_events][i % chunk_events] = e;
    b->count.store(n + 1, std::memory_order_release);
    return;
  }
  const std::size_t chunk = n / chunk_events;
  const std::size_t slot = n % chunk_events;
  if (slot == 0) {
    if (chunk >= max_chunks_per_thread || !charge_chunk()) {
      if (b->charged > 0 && reg().ring.load(std::memory_order_relaxed)) {
        b->ring_slots.store(b->charged * chunk_events, std::memory_order_relaxed); // published by count
        b->chunks[0][0] = e;
        b->count.store(n + 1, std::memory_order_release);
        return;
      }
      b->dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (b->chunks[chunk] == nullptr)
      b->chunks[chunk] = new (std::nothrow) trace_event[chunk_events]; // touched here, once per thread
    if (b->chunks[chunk] == nullptr) {
      b->dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    ++b->charged;
  }
  b->chunks[chunk][slot] = e;
  b->count.store(n + 1, std::memory_order_release);
}

std::uint32_t intern(std::string_view s) noexcept {
  auto* b = local_buffer();
  if (b == nullptr)
    return 0;
  if (auto it = b->string_ids.find(s); it != b->string_ids.end())
    return it->second;
  try {
    if (b->string_bytes + s.size() > max_string_bytes)
      return 0;
    std::uint32_t id = 0;
    {
      std::lock_guard<std::mutex> lock(b->strings_mutex);
      b->strings.emplace_back(s);
      b->string_bytes += s.size();
      id = static_cast<std::uint32_t>(b->strings.size());
    }
    b->string_ids.emplace(std::string(s), id);
    return id;
  } catch (...) {
    return 0;
  }
}

std::uint64_t trace_session() noexcept {
  return reg().session.load(std::memory_order_acquire);
}

std::uint32_t this_thread_track() noexcept {
  auto* b = local_buffer();
  return b == nullptr ? 0 : track::thread_base + b->number;
}

void name_track(std::uint32_t id, std::string_view name) noexcept {
  auto* b = local_buffer();
  if (b == nullptr || std::find(b->named_here.begin(), b->named_here.end(), id) != b->named_here.end())
    return;
  try {
    auto& r = reg();
    {
      std::lock_guard<std::mutex> lock(r.mutex);
      r.track_names.emplace(id, std::string(name));
    }
    b->named_here.push_back(id);
  } catch (...) {
  }
}

void name_this_thread(std::string_view name) noexcept {
  auto* b = local_buffer();
  if (b == nullptr || b->thread_named)
    return;
  try {
    auto& r = reg();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.track_names[track::thread_base + b->number] = std::string(name);
    b->thread_named = true;
  } catch (...) {
  }
}

void start_recording(std::uint64_t max_events, when_full full) {
  auto& r = reg();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::erase_if(r.buffers, [](const auto& b) { return b->orphaned.load(std::memory_order_acquire); });
  r.chunks_used.store(0, std::memory_order_relaxed);
  r.ring.store(full == when_full::ring, std::memory_order_relaxed);
  r.chunk_budget.store(std::max<std::size_t>(1, (max_events + chunk_events - 1) / chunk_events),
                       std::memory_order_relaxed);
  if (r.calibration_ns == 0) {
    r.calibration_ns = trace_clock_ns();
    r.calibration_ticks = trace_ticks();
  }
  r.session.fetch_add(1, std::memory_order_release);
  trace_detail::trace_recording.store(true, std::memory_order_release);
}

void stop_recording() noexcept {
  trace_detail::trace_recording.store(false, std::memory_order_release);
}

std::uint64_t recorded_events() {
  auto& r = reg();
  std::lock_guard<std::mutex> lock(r.mutex);
  const std::uint64_t session = r.session.load(std::memory_order_acquire);
  std::uint64_t n = 0;
  for (auto& b : r.buffers)
    if (b->session.load(std::memory_order_acquire) == session)
      n += b->count.load(std::memory_order_acquire);
  return n;
}

collected_trace collect() {
  auto& r = reg();
  collected_trace out;
  std::vector<std::shared_ptr<thread_buffer>> buffers;
  std::uint64_t session = 0;
  std::int64_t ticks0 = 0, ns0 = 0;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    ticks0 = r.calibration_ticks;
    ns0 = r.calibration_ns;
    buffers = r.buffers;
    session = r.session.load(std::memory_order_acquire);
    out.track_names.assign(r.track_names.begin(), r.track_names.end());
  }
  // Ticks to nanoseconds: the line through the calibration pair and a pair read now (the interval
  // grows with the process's life, so the slope only gets better; on a host without a tick
  // counter both clocks are the same).
  const std::int64_t ns1 = trace_clock_ns();
  const std::int64_t ticks1 = trace_ticks();
  const double slope = ticks1 > ticks0 && ns1 > ns0 ? static_cast<double>(ns1 - ns0) / static_cast<double>(ticks1 - ticks0) : 1.0;
  auto to_ns = [&](std::int64_t t) { return ns0 + static_cast<std::int64_t>(static_cast<double>(t - ticks0) * slope + 0.5); };
  for (auto& b : buffers) {
    if (b->session.load(std::memory_order_acquire) != session)
      continue; // nothing recorded by this thread in this session
    const std::size_t n = b->count.load(std::memory_order_acquire);
    out.dropped += b->dropped.load(std::memory_order_relaxed);
    // The events to read, oldest first: all n, or in a ring that has wrapped the last `round` but
    // the margin, from slot (n - round + margin) % round on.
    const std::size_t round = b->ring_slots.load(std::memory_order_relaxed);
    std::size_t first = 0;
    if (round != 0 && n > round) {
      first = n - round + std::min(ring_read_margin, round);
      out.overwritten += first;
    }
    std::vector<std::string> strings;
    {
      std::lock_guard<std::mutex> lock(b->strings_mutex);
      strings = b->strings;
    }
    for (std::size_t k = first; k < n; ++k) {
      const std::size_t i = round != 0 ? k % round : k;
      const trace_event& e = b->chunks[i / chunk_events][i % chunk_events];
      collected_event c{e, {}, {}};
      // Start and end mapped apiece, so that an event that ends within another still does.
      c.e.start_ns = to_ns(e.start_ns);
      if (e.dur_ns >= 0)
        c.e.dur_ns = to_ns(e.start_ns + e.dur_ns) - c.e.start_ns;
      if (e.text != 0 && e.text <= strings.size())
        c.text = strings[e.text - 1];
      if (e.name_id != 0 && e.name_id <= strings.size())
        c.name = strings[e.name_id - 1];
      else
        c.name = e.name != nullptr ? e.name : "";
      out.events.push_back(std::move(c));
    }
  }
  return out;
}

} // namespace am::observability
