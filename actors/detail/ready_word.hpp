/// A one-shot readiness flag that threads can sleep on, for the future state: set once, waited on
/// by any number of threads, with a timeout. On Linux it sleeps on a futex, so a state needs no
/// mutex and condition variable (their construction, destruction and lock round trips showed in the
/// lane benchmark's profile); elsewhere it falls back to a mutex and a condition variable.
#ifndef ACTORMESH_ACTORS_DETAIL_READY_WORD_HPP
#define ACTORMESH_ACTORS_DETAIL_READY_WORD_HPP

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#if defined(__linux__)
#include <climits>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#include <condition_variable>
#include <mutex>
#endif

namespace am::detail {

/// A flag that goes from unset to set once. `set()` wakes every sleeper; `sleep_until` returns
/// when the flag is set or the deadline passes (spurious early returns are allowed: callers loop).
class ready_word {
public:
  /// True once set.
  bool is_set() const noexcept { return word_.load(std::memory_order_acquire) != 0; }

  /// Sets the flag (release and seq_cst), without waking anyone yet: cheap enough to call under a
  /// spin lock. Call once, then `wake()`.
  void publish() noexcept {
#if defined(__linux__)
    word_.store(1, std::memory_order_seq_cst);
#else
    std::lock_guard<std::mutex> guard(mutex_);
    word_.store(1, std::memory_order_seq_cst);
#endif
  }

  /// Wakes the threads sleeping on the flag (after `publish()`).
  void wake() noexcept {
#if defined(__linux__)
    // Seq_cst on both sides: either a sleeper counted itself before this load (and is woken), or it
    // sees the flag set before it sleeps (the kernel compares the word too).
    if (sleepers_.load(std::memory_order_seq_cst) > 0)
      syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
#else
    cv_.notify_all();
#endif
  }

  /// Sleeps until the flag is set or `deadline` passes; returns whether it is set.
  bool sleep_until(std::chrono::steady_clock::time_point deadline) const {
#if defined(__linux__)
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    while (word_.load(std::memory_order_seq_cst) == 0) {
      auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero())
        break;
      auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      timespec rel{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
      syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAIT_PRIVATE, 0u, &rel, nullptr, 0);
    }
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
#else
    std::unique_lock<std::mutex> guard(mutex_);
    cv_.wait_until(guard, deadline, [this] { return is_set(); });
#endif
    return is_set();
  }

  /// Sleeps until the flag is set.
  void sleep() const {
    while (!sleep_until(std::chrono::steady_clock::now() + std::chrono::hours(24))) {
    }
  }

private:
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t)
                  && std::atomic<std::uint32_t>::is_always_lock_free,
                "the futex word must be a plain 32-bit word");
  mutable std::atomic<std::uint32_t> word_{0};
#if defined(__linux__)
  mutable std::atomic<int> sleepers_{0};
#else
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
#endif
};

/// A lock for the few instructions a future state guards (its callback list and its one store):
/// an atomic flag, spinning briefly then yielding, for locks held for nanoseconds.
class tiny_lock {
public:
  /// Takes the lock.
  void lock() noexcept {
    for (int i = 0; flag_.exchange(true, std::memory_order_acquire); ++i) {
      while (flag_.load(std::memory_order_relaxed)) {
        if (++i > 64)
          std::this_thread::yield();
#if defined(__x86_64__) || defined(__i386__)
        else
          __builtin_ia32_pause();
#endif
      }
    }
  }

  /// Releases the lock.
  void unlock() noexcept { flag_.store(false, std::memory_order_release); }

private:
  std::atomic<bool> flag_{false};
};

} // namespace am::detail

#endif // ACTORMESH_ACTORS_DETAIL_READY_WORD_HPP
