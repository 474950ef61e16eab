#include "devices/cpu/cpu_compute_gate.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>

namespace am::detail {

namespace {

/// AM_CPU_COMPUTE_SLOTS when it is a count from 0 to 4096, else 0 (no gate).
int default_slots() noexcept {
  if (const char* env = std::getenv("AM_CPU_COMPUTE_SLOTS")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 0 && v <= 4096)
      return static_cast<int>(v);
  }
  return 0;
}

/// The slots: a counter and the queue of waiting threads, each handed its slot by the releaser.
class gate {
public:
  gate() : slots_(default_slots()), free_(slots_) {}

  int slots() const noexcept { return slots_.load(std::memory_order_relaxed); }

  void set_slots(int slots) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_ += slots - slots_.load(std::memory_order_relaxed);
    slots_.store(slots, std::memory_order_relaxed);
    while (!waiting_.empty() && (free_ > 0 || slots == 0)) // gate off: every waiter goes
      grant_front();
  }

  /// False (nothing held) when the gate is off.
  bool acquire() {
    if (slots_.load(std::memory_order_relaxed) == 0) // off (the default): no lock taken
      return false;
    std::unique_lock<std::mutex> lock(mutex_);
    if (slots_.load(std::memory_order_relaxed) == 0)
      return false;
    if (free_ > 0 && waiting_.empty()) {
      --free_;
      return true;
    }
    waiter self;
    waiting_.push_back(&self);
    self.wake.wait(lock, [&] { return self.granted; });
    return true;
  }

  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++free_;
    if (free_ > 0 && !waiting_.empty())
      grant_front();
  }

private:
  struct waiter {
    std::condition_variable wake;
    bool granted = false;
  };

  /// Hands a free slot to the longest waiting thread (under the lock: it may leave at once).
  void grant_front() {
    auto* w = waiting_.front();
    waiting_.pop_front();
    --free_;
    w->granted = true;
    w->wake.notify_one();
  }

  std::mutex mutex_;
  std::atomic<int> slots_;
  int free_; ///< may go below 0 after the slots shrink, until holders give theirs back
  std::deque<waiter*> waiting_;
};

gate& the_gate() {
  static gate g;
  return g;
}

} // namespace

int cpu_compute_slots() noexcept {
  return the_gate().slots();
}

void set_cpu_compute_slots(int slots) noexcept {
  the_gate().set_slots(slots < 0 ? 0 : slots);
}

compute_slot::compute_slot(std::int64_t elements) {
  if (elements >= gated_stage_elements)
    held_ = the_gate().acquire();
}

namespace {

std::int64_t gated_elements(const cpu_stage& stage, const compiled_program& c, const program& p) {
  switch (stage.what) {
    case cpu_stage::kind::fused: return c.regions[static_cast<std::size_t>(stage.region)].elements;
    case cpu_stage::kind::dot: return 0;
    default: {
      std::int64_t n = 0;
      for (auto o : p.code[static_cast<std::size_t>(stage.instruction)].operands)
        n += element_count(p.code[static_cast<std::size_t>(o)].type.shape);
      return n;
    }
  }
}

} // namespace

compute_slot::compute_slot(const cpu_stage& stage, const compiled_program& c, const program& p)
  : compute_slot(gated_elements(stage, c, p)) {}

compute_slot::~compute_slot() {
  if (held_)
    the_gate().release();
}

} // namespace am::detail
