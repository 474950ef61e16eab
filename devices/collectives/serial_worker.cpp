#include "devices/collectives/serial_worker.hpp"

#include <pthread.h>
#include <signal.h>

#include <utility>

namespace am::detail {

serial_worker::serial_worker(const std::string& name) : thread_([this] { run(); }) {
  ::pthread_setname_np(thread_.native_handle(), name.substr(0, 15).c_str());
}

serial_worker::~serial_worker() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void serial_worker::post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

bool serial_worker::wait_idle(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> guard(mutex_);
  return idle_.wait_until(guard, deadline, [this] { return tasks_.empty() && !running_; });
}

void serial_worker::run() {
  // A peer that dies in the middle of a collective closes its sockets, and Gloo writes with plain
  // send/writev: the kernel would raise SIGPIPE and kill this process. Blocked in this thread (and
  // so in Gloo's loop thread, which this thread creates with the engine and which inherits the
  // mask), the write returns EPIPE instead and the operation fails with an error naming the peer.
  // Seen here: a survivor killed by signal 13 about once in eight runs of the kill-mid-all-reduce test.
  sigset_t pipe_signal;
  ::sigemptyset(&pipe_signal);
  ::sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  std::unique_lock<std::mutex> guard(mutex_);
  for (;;) {
    cv_.wait(guard, [this] { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty())
      return; // stopping, and everything posted has run
    auto task = std::move(tasks_.front());
    tasks_.pop_front();
    running_ = true;
    guard.unlock();
    try {
      task();
    } catch (...) {
      // Tasks report their own errors (through their promises); nothing may escape the thread.
    }
    task = nullptr; // release what the task holds before waiting again
    guard.lock();
    running_ = false;
    if (tasks_.empty())
      idle_.notify_all();
  }
}

} // namespace am::detail
