#include "actormesh/multihost/preemption.hpp"

#include <utility> // before Boost.Asio under C++20

#include "actormesh/actors/errors.hpp"
#include "devices/runtime_context.hpp"
#include "actormesh/devices/runtime.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace am::multihost {

namespace {

using namespace std::chrono_literals;

const std::string notice_key = "am.preemption/notice";

std::string step_key(int p) { return "am.preemption/step/" + std::to_string(p); }

/// The preemption protocol of one process, kept as a runtime service: a thread running the
/// signal_set, and a watcher thread that learns of the notice and then of every process's step.
/// The report of this process's step is sent by whichever thread learns of the notice first (the
/// signal's or the watcher), never by the training thread: so a process blocked in a collective
/// that waits for another one still reports, and the one waiting for reports is never waiting
/// on it.
class preemption_service {
public:
  explicit preemption_service(detail::runtime_context& rt)
      : cluster_(rt.cluster()), me_(rt.process_index()), processes_(rt.config().num_processes),
        timeout_(rt.config().collective_timeout) {
    signals_.async_wait([this](const boost::system::error_code& ec, int) {
      if (ec)
        return;
      notice();
      try {
        cluster_.kv_set(notice_key, std::to_string(me_));
      } catch (const std::exception&) {
        // The cluster is gone or stopping: nobody is left to tell.
      }
    });
    signal_thread_ = std::thread([this] { io_.run(); });
    watcher_ = std::thread([this] { watch(); });
  }

  ~preemption_service() {
    stopping_ = true;
    io_.stop();
    signal_thread_.join();
    watcher_.join();
  }

  preemption_service(const preemption_service&) = delete;
  preemption_service& operator=(const preemption_service&) = delete;

  bool reached(std::int64_t step) {
    std::unique_lock<std::mutex> lock(mutex_);
    last_step_ = step;
    if (!noticed_)
      return false;
    if (!safe_ && step > *reported_) {
      // The safe step may be this one: wait for every report before going past it.
      if (!changed_.wait_for(lock, timeout_, [&] { return safe_ || !failure_.empty(); }))
        throw timeout_error("reached_preemption_sync_point: processes " + missing_text() + " did not report their "
                            "step within " + std::to_string(timeout_.count()) + " ms of the preemption notice");
      if (!safe_)
        throw process_failure_error("reached_preemption_sync_point: " + failure_, failed_process_);
    }
    return safe_ && step == *safe_;
  }

private:
  /// Learns of the notice (once): this process has reached the step of its last call (-1 before
  /// any), which it reports.
  void notice() {
    std::int64_t step = 0;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (noticed_)
        return;
      noticed_ = true;
      reported_ = last_step_.value_or(-1);
      step = *reported_;
    }
    try {
      cluster_.kv_set(step_key(me_), std::to_string(step));
    } catch (const std::exception&) {
      // The cluster is stopping: the others' wait ends with its own error.
    }
  }

  std::string missing_text() const {
    std::string out = "[";
    for (int p = static_cast<int>(steps_.size()); p < processes_; ++p)
      out += (p > static_cast<int>(steps_.size()) ? ", " : "") + std::to_string(p);
    return out + "]";
  }

  /// Waits for `key` in short rounds until it is set, the runtime stops, or `failed` says so.
  std::optional<std::string> wait_key(const std::string& key, int owner) {
    while (!stopping_) {
      try {
        return cluster_.kv_get(key, 200ms);
      } catch (const timeout_error&) {
        if (owner >= 0)
          if (auto why = cluster_.failure_of(owner)) {
            std::lock_guard<std::mutex> guard(mutex_);
            failure_ = "process " + std::to_string(owner) + " failed before reporting its step: " + *why;
            failed_process_ = owner;
            changed_.notify_all();
            return std::nullopt;
          }
      } catch (const std::exception&) {
        return std::nullopt; // the runtime is stopping
      }
    }
    return std::nullopt;
  }

  void watch() {
    if (!wait_key(notice_key, -1))
      return;
    notice();
    std::int64_t largest = 0;
    for (int p = 0; p < processes_; ++p) {
      auto value = wait_key(step_key(p), p);
      if (!value)
        return;
      std::lock_guard<std::mutex> guard(mutex_);
      steps_.push_back(std::stoll(*value));
      largest = p == 0 ? steps_.back() : std::max(largest, steps_.back());
    }
    std::lock_guard<std::mutex> guard(mutex_);
    safe_ = largest + 1;
    changed_.notify_all();
  }

  detail::cluster_services& cluster_;
  const int me_;
  const int processes_;
  const std::chrono::milliseconds timeout_;
  boost::asio::io_context io_;
  boost::asio::signal_set signals_{io_, SIGTERM};
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable changed_;
  bool noticed_ = false;
  std::optional<std::int64_t> last_step_; ///< the step of the last call
  std::optional<std::int64_t> reported_; ///< the step this process reported
  std::vector<std::int64_t> steps_;      ///< every process's report, by process, as they come
  std::optional<std::int64_t> safe_;
  std::string failure_;
  int failed_process_ = -1;
  std::thread signal_thread_;
  std::thread watcher_;
};

/// The runtime's preemption protocol, started by the first call that needs it.
const detail::service_key<preemption_service> preemption_key{"preemption"};

std::shared_ptr<preemption_service> service() {
  auto rt = detail::current_context();
  return rt->service(preemption_key, [&rt] { return std::make_shared<preemption_service>(*rt); });
}

} // namespace

void enable_preemption_notice() {
  if (is_running() && process_count() > 1)
    service();
}

bool reached_preemption_sync_point(std::int64_t step) {
  if (!is_running() || process_count() == 1)
    return false;
  return service()->reached(step);
}

} // namespace am::multihost
