#include "devices/cpu/blas_thread.hpp"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

namespace am::detail {

namespace {

/// Below this many floating-point operations (a product that takes microseconds) a call made while no
/// other runs runs on its caller's thread: the two thread hand-offs would cost more.
constexpr double small_call_flop = 4e6;

/// How long after a call had to wait (several devices making products at once) the calls keep
/// going through the BLAS thread, whose back-to-back runs are then what keeps the cores busy.
constexpr std::chrono::milliseconds contention_memory{200};

/// True on a thread while it runs a BLAS call.
thread_local bool inside_call = false;

/// Marks this thread as running a call for the scope's duration.
struct inside {
  inside() { inside_call = true; }
  ~inside() { inside_call = false; }
};

/// One queued call and its caller's wait.
struct blas_job {
  const std::function<void()>* call = nullptr;
  std::exception_ptr error;
  bool done = false;
  std::condition_variable finished;
};

/// The thread and its queue. Made on first use and never destroyed: the thread waits on the queue
/// until the process ends (device threads may make products until then).
class blas_thread {
public:
  blas_thread() {
    std::thread t([this] { run(); });
    ::pthread_setname_np(t.native_handle(), "am-blas");
    t.detach();
  }

  static blas_thread& instance() {
    static const bool forks_handled = [] {
      // A child of fork() has none of the parent's threads: it starts its own BLAS thread at its
      // first product (the parent's object, whose mutex a vanished thread may hold, is left alone).
      ::pthread_atfork(nullptr, nullptr, [] { current().store(nullptr); });
      return true;
    }();
    (void)forks_handled;
    auto* the = current().load(std::memory_order_acquire);
    if (the)
      return *the;
    auto* made = new blas_thread(); // never destroyed: see the class comment
    if (current().compare_exchange_strong(the, made, std::memory_order_acq_rel))
      return *made;
    return *the; // another thread made one first: `made` stays, its thread idle (never freed under it)
  }

  void submit(const std::function<void()>& call, bool small) {
    if (inside_call) { // a call made by a call (here or on the BLAS thread): it holds the turn
      call();
      return;
    }
    auto now = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> guard(mutex_);
    if (busy_ || !queue_.empty())
      contended_until_ = now + contention_memory;
    else if (small || now >= contended_until_) {
      // Nobody at BLAS, and the call small or no call lately had to wait: run it here, sparing
      // the two hand-offs (one device alone never pays them); calls arriving meanwhile queue for
      // the BLAS thread, which runs them once this one ends.
      busy_ = true;
      guard.unlock();
      struct release {
        blas_thread& self;
        ~release() {
          std::lock_guard<std::mutex> again(self.mutex_);
          self.busy_ = false;
          if (!self.queue_.empty())
            self.ready_.notify_one();
        }
      } done{*this};
      inside call_scope;
      call();
      return;
    }
    blas_job job;
    job.call = &call;
    queue_.push_back(&job);
    ready_.notify_one();
    job.finished.wait(guard, [&] { return job.done; });
    if (job.error)
      std::rethrow_exception(job.error);
  }

private:
  static std::atomic<blas_thread*>& current() {
    static std::atomic<blas_thread*> the{nullptr};
    return the;
  }

  void run() {
    std::unique_lock<std::mutex> guard(mutex_);
    for (;;) {
      ready_.wait(guard, [this] { return !busy_ && !queue_.empty(); });
      auto* job = queue_.front();
      queue_.pop_front();
      busy_ = true;
      guard.unlock();
      std::exception_ptr error;
      try {
        inside call_scope;
        (*job->call)();
      } catch (...) {
        error = std::current_exception();
      }
      guard.lock();
      busy_ = false;
      job->error = error;
      job->done = true;
      job->finished.notify_one();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<blas_job*> queue_;
  bool busy_ = false; ///< a call is running, here or on a caller's thread
  std::chrono::steady_clock::time_point contended_until_{}; ///< a call had to wait less than contention_memory ago
};

} // namespace

void run_on_blas_thread(const std::function<void()>& call, double flop) {
  blas_thread::instance().submit(call, flop < small_call_flop);
}

} // namespace am::detail
