#include "tools/stress_mix.hpp"

#include <actormesh.hpp>

#include "sharding/detail/addressable.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

namespace am::tools {

namespace {

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int value_stride = 1000000; // a round's value: thread * value_stride + round

/// State the registered bodies write to; one run at a time (run_guard).
std::mutex run_guard;
std::mutex logs_mutex;
std::vector<std::vector<int>> function_logs; // per thread: the rounds the function saw, in order
std::atomic<int> created{0};
std::atomic<int> destroyed{0};

/// Appends its input's round to its thread's log and returns the input.
const auto record = colocated_python("am.stress.record", [](const array& x) {
  int v = x.to_host().item<int>();
  std::lock_guard<std::mutex> guard(logs_mutex);
  auto t = static_cast<std::size_t>(v / value_stride);
  if (t < function_logs.size())
    function_logs[t].push_back(v % value_stride);
  return x;
});

/// Counts the calls it gets: a call's result is its position among the instance's calls.
struct tally {
  tally() { ++created; }
  ~tally() { ++destroyed; }
  tally(const tally&) = delete;
  tally& operator=(const tally&) = delete;
  array next(const array& x) { return x * 0 + ++count; }
  int count = 0;
};

const auto tally_class = colocated_python_class<tally>("am.stress.tally").def("next", &tally::next);

spec_tree same_as_first(const spec_tree& in) { return in[0]; }

/// Outputs of one round, checked when the round leaves the window.
struct round_outputs {
  int round = 0;
  clock_type::time_point issued;
  std::optional<array> recorded, own_count, shared_count, sum;
};

/// Problems seen, kept short.
class findings {
public:
  void violation(std::string text) { add(violations_, std::move(text)); }
  void error(std::string text) { add(errors_, std::move(text)); }
  void fill(stress_report& r) {
    std::lock_guard<std::mutex> guard(mutex_);
    r.violations = violations_;
    r.errors = errors_;
    r.messages = messages_;
  }

private:
  void add(int& counter, std::string text) {
    std::lock_guard<std::mutex> guard(mutex_);
    ++counter;
    if (messages_.size() < 10)
      messages_.push_back(std::move(text));
  }
  std::mutex mutex_;
  int violations_ = 0;
  int errors_ = 0;
  std::vector<std::string> messages_;
};

/// One caller thread's part of the mix.
class caller {
public:
  caller(const stress_config& config, int index, device dev, const colocated_function<array(array)>& shared_next,
         findings& found, std::atomic<std::int64_t>& done)
      : config_(config), index_(index), dev_(std::move(dev)), shared_next_(shared_next), found_(found), done_(done) {}

  /// Runs every round; returns the rounds' latencies (us).
  std::vector<double> run() {
    std::vector<double> latencies;
    latencies.reserve(static_cast<std::size_t>(config_.calls));
    try {
      mesh m({1}, {dev_}, {"x"});
      auto s = make_named_sharding(m, P());
      std::optional<colocated_object<tally>> own;
      std::optional<colocated_function<array(array)>> own_next, rec;
      if (config_.colocated) {
        own = tally_class();
        own_next = own->method<array(array)>("next"); // unspecialized: the first call learns its specs
        rec = record.specialize({.out_specs_fn = same_as_first});
      }
      auto acc = device_put(host_array::scalar(0), s);
      std::deque<round_outputs> window;
      for (int i = 0; i < config_.calls; ++i) {
        round_outputs r{i, clock_type::now(), {}, {}, {}, {}};
        if (config_.colocated) {
          auto x = device_put(host_array::scalar(index_ * value_stride + i), s);
          r.recorded = (*rec)(x);
          r.own_count = (*own_next)(x);
          r.shared_count = shared_next_(x);
        }
        if (config_.arrays) {
          acc = acc + 1;
          r.sum = acc;
        }
        window.push_back(std::move(r));
        if (static_cast<int>(window.size()) > config_.window) {
          check(window.front(), latencies);
          window.pop_front();
        }
      }
      for (auto& r : window)
        check(r, latencies);
    } catch (const std::exception& e) {
      found_.error("thread " + std::to_string(index_) + ": " + e.what());
    }
    return latencies;
  }

private:
  void check(const round_outputs& r, std::vector<double>& latencies) {
    try {
      int want = r.round + 1;
      if (r.recorded && r.recorded->to_host().item<int>() != index_ * value_stride + r.round)
        found_.violation("thread " + std::to_string(index_) + " round " + std::to_string(r.round)
                         + ": the function returned another round's value");
      if (r.own_count && r.own_count->to_host().item<int>() != want)
        found_.violation("thread " + std::to_string(index_) + " round " + std::to_string(r.round)
                         + ": its own object counted " + std::to_string(r.own_count->to_host().item<int>())
                         + " calls, not " + std::to_string(want));
      if (r.shared_count) {
        int v = r.shared_count->to_host().item<int>();
        if (v <= last_shared_)
          found_.violation("thread " + std::to_string(index_) + " round " + std::to_string(r.round)
                           + ": the shared object counted " + std::to_string(v) + " after "
                           + std::to_string(last_shared_));
        last_shared_ = v;
      }
      if (r.sum && r.sum->to_host().item<int>() != want)
        found_.violation("thread " + std::to_string(index_) + " round " + std::to_string(r.round)
                         + ": the running sum is " + std::to_string(r.sum->to_host().item<int>()) + ", not "
                         + std::to_string(want));
      latencies.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - r.issued).count());
    } catch (const std::exception& e) {
      found_.error("thread " + std::to_string(index_) + " round " + std::to_string(r.round) + ": " + e.what());
    }
    done_.fetch_add(1, std::memory_order_relaxed);
  }

  const stress_config& config_;
  int index_;
  device dev_;
  const colocated_function<array(array)>& shared_next_;
  findings& found_;
  std::atomic<std::int64_t>& done_;
  int last_shared_ = 0;
};

double quantile(std::vector<double>& v, double q) {
  if (v.empty())
    return 0;
  auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

/// The function's log of every thread in issue order, and every instance built and destroyed once.
void check_afterwards(const stress_config& config, int instances, findings& found) {
  {
    std::lock_guard<std::mutex> guard(logs_mutex);
    for (std::size_t t = 0; t < function_logs.size(); ++t) {
      auto& log = function_logs[t];
      if (log.size() != static_cast<std::size_t>(config.calls))
        found.error("thread " + std::to_string(t) + ": the function ran " + std::to_string(log.size())
                    + " times, not " + std::to_string(config.calls));
      for (std::size_t i = 0; i < log.size(); ++i)
        if (log[i] != static_cast<int>(i)) {
          found.violation("thread " + std::to_string(t) + ": the function saw round " + std::to_string(log[i])
                          + " at position " + std::to_string(i));
          break;
        }
    }
  }
  auto deadline = clock_type::now() + 60s; // destruction is asynchronous
  while (destroyed < instances && clock_type::now() < deadline)
    std::this_thread::sleep_for(1ms);
  if (created != instances || destroyed != instances)
    found.error("objects: expected " + std::to_string(instances) + " instances, " + std::to_string(created.load())
                + " created and " + std::to_string(destroyed.load()) + " destroyed");
}

} // namespace

void check_stress_config(const stress_config& c) {
  if (c.threads < 1 || c.threads > 1024)
    throw value_error("stress: --threads must be 1..1024, got " + std::to_string(c.threads));
  if (c.calls < 1 || c.calls >= value_stride)
    throw value_error("stress: --calls must be 1.." + std::to_string(value_stride - 1) + ", got "
                      + std::to_string(c.calls));
  if (!c.colocated && !c.arrays)
    throw value_error("stress: the mix is empty (neither colocated calls nor array operations)");
  if (c.window < 1 || c.window > 4096)
    throw value_error("stress: the window must be 1..4096, got " + std::to_string(c.window));
}

stress_report run_stress_mix(const stress_config& config,
                             const std::function<void(std::int64_t, std::int64_t)>& progress) {
  check_stress_config(config);
  std::unique_lock<std::mutex> one_run(run_guard, std::try_to_lock);
  if (!one_run.owns_lock())
    throw runtime_error("stress: another stress run is in progress in this process");
  // The devices this process may call: all of them for a single controller (or alone), its own
  // under a multi-controller launch (`actormesh launch -n N -- actormesh stress`), where another
  // process's devices are not addressable here.
  auto devs = detail::drives_every_device() ? devices() : local_devices();
  {
    std::lock_guard<std::mutex> guard(logs_mutex);
    function_logs.assign(config.colocated ? static_cast<std::size_t>(config.threads) : 0, {});
  }
  created = 0;
  destroyed = 0;
  findings found;
  std::atomic<std::int64_t> done{0};
  std::atomic<int> threads_done{0};
  const std::int64_t total = static_cast<std::int64_t>(config.threads) * config.calls;
  std::set<int> shared_device_sets;
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(config.threads));
  auto start = clock_type::now();
  {
    auto shared = tally_class();
    auto shared_next = shared.method<array(array)>("next").specialize({.out_specs_fn = same_as_first});
    std::vector<std::thread> threads;
    for (int t = 0; t < config.threads; ++t) {
      auto dev = devs[static_cast<std::size_t>(t) % devs.size()];
      shared_device_sets.insert(dev.id);
      threads.emplace_back([&, t, dev] {
        caller c(config, t, dev, shared_next, found, done);
        latencies[static_cast<std::size_t>(t)] = c.run();
        ++threads_done;
      });
    }
    while (threads_done.load() < config.threads) {
      if (progress)
        progress(done.load(), total);
      std::this_thread::sleep_for(100ms);
    }
    for (auto& th : threads)
      th.join();
  }
  stress_report report;
  report.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  report.rounds = done.load();
  report.calls = report.rounds * ((config.colocated ? 3 : 0) + (config.arrays ? 1 : 0));
  if (progress)
    progress(report.rounds, total);
  std::vector<double> all;
  for (auto& l : latencies)
    all.insert(all.end(), l.begin(), l.end());
  report.p50_us = quantile(all, 0.5);
  report.p99_us = quantile(all, 0.99);
  // The function's log and the instance counts live where the bodies ran: checked when that is here
  // (with worker processes each call's result is still checked above, on this side).
  bool all_here = std::all_of(devs.begin(), devs.end(), [](const device& d) { return d.process_index == process_index(); });
  if (config.colocated && all_here)
    check_afterwards(config, config.threads + static_cast<int>(shared_device_sets.size()), found);
  found.fill(report);
  return report;
}

} // namespace am::tools
