#include "actormesh/actors/task.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>

namespace am::detail {

namespace {

/// The home of a task driven by sync_wait: a queue of coroutines to resume, drained by the
/// waiting thread.
class run_loop_home final : public resume_home {
public:
  void resume_later(std::coroutine_handle<> h) override {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      ready_.push_back(h);
    }
    wake_.notify_one();
  }

  /// The task finished (on this thread, from its final suspension).
  void finish() noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    finished_ = true;
  }

  /// Resumes queued coroutines until the task finishes; false when `deadline` passes first.
  bool run(std::optional<std::chrono::steady_clock::time_point> deadline) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!finished_) {
      if (ready_.empty()) {
        if (!deadline) {
          wake_.wait(lock, [&] { return !ready_.empty(); });
        } else if (!wake_.wait_until(lock, *deadline, [&] { return !ready_.empty(); })) {
          return false;
        }
      }
      auto h = ready_.front();
      ready_.pop_front();
      lock.unlock();
      {
        resume_home_scope scope(this);
        h.resume();
      }
      lock.lock();
    }
    return true;
  }

private:
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::coroutine_handle<>> ready_;
  bool finished_ = false;
};

} // namespace

bool drive_to_completion(std::coroutine_handle<> h, task_promise_base& promise,
                         std::optional<std::chrono::steady_clock::time_point> deadline) {
  auto home = std::make_shared<run_loop_home>();
  promise.on_done = [](void* context) { static_cast<run_loop_home*>(context)->finish(); };
  promise.done_context = home.get();
  home->resume_later(h); // the first step runs in run(), like every later one
  bool finished = home->run(deadline);
  promise.on_done = nullptr; // a task abandoned at its deadline tells nobody
  return finished;
}

} // namespace am::detail
