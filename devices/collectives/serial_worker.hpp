/// A thread that runs tasks one at a time, in the order they were posted: the thread a
/// communicator's blocking Gloo calls run on, so they never block the caller's thread (which may
/// be an actor's) longer than the caller chooses to wait.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace am::detail {

/// One dedicated thread fed by a queue. Tasks must not throw (what they throw is dropped).
class serial_worker {
public:
  /// Starts the thread, named `name` (truncated to 15 characters) for debuggers and top.
  explicit serial_worker(const std::string& name);

  /// Runs the tasks still queued, then joins the thread.
  ~serial_worker();

  serial_worker(const serial_worker&) = delete;
  serial_worker& operator=(const serial_worker&) = delete;

  /// Queues `task` behind the ones already posted.
  void post(std::function<void()> task);

  /// Waits until every task posted so far has run (and none is running), or `deadline`; returns
  /// true when idle. Tasks posted meanwhile are waited for too.
  bool wait_idle(std::chrono::steady_clock::time_point deadline);

private:
  void run();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  bool running_ = false; ///< a task is running (under mutex_)
  std::condition_variable idle_;
  std::thread thread_;
};

} // namespace am::detail
