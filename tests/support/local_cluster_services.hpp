// A cluster of pretend processes inside one test process: am::detail::cluster_services backed by
// an in-memory map and one condition variable, so the collectives engine can run real Gloo over
// real loopback TCP with one thread per "process". It behaves as the mesh supervisor promises:
// every wait honours its timeout and names the processes that never arrived, check_collective
// really compares what every participant issued (a mismatch throws am::desync_error on every
// participant, naming who issued what; a step that failed fails the same way for late comers), and
// a process marked failed turns waits that involve it into am::process_failure_error.
#pragma once

#include "actors/cluster_services.hpp"
#include "actormesh/actors/errors.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace am::test {

/// The shared state of `process_count` pretend processes; services(i) is what process i sees.
class local_cluster {
public:
  explicit local_cluster(int process_count) : count_(process_count) {
    for (int i = 0; i < process_count; ++i)
      views_.push_back(std::make_unique<view>(*this, i));
  }

  local_cluster(const local_cluster&) = delete;
  local_cluster& operator=(const local_cluster&) = delete;

  int process_count() const noexcept { return count_; }

  /// The services of process `index` (lives as long as the cluster).
  am::detail::cluster_services& services(int index) { return *views_.at(index); }

  /// Gives process `index` the cluster secret `secret` (none by default); set before use.
  void set_secret(int index, std::string secret) { views_.at(index)->set_secret(std::move(secret)); }

  /// Marks `process` failed: check_alive and every wait that involves it throw
  /// am::process_failure_error naming it.
  void fail(int process) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      failed_.insert(process);
    }
    cv_.notify_all();
  }

  /// The number of check_collective calls made so far, by every process.
  std::uint64_t checks() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return checks_;
  }

private:
  using clock = std::chrono::steady_clock;

  /// What process `index` sees.
  class view final : public am::detail::cluster_services {
  public:
    view(local_cluster& cluster, int index) : cluster_(cluster), index_(index) {}
    int process_index() const noexcept override { return index_; }
    int process_count() const noexcept override { return cluster_.count_; }
    void kv_set(const std::string& key, const std::string& value) override { cluster_.kv_set(key, value); }
    std::string kv_get(const std::string& key, std::chrono::milliseconds timeout) override {
      return cluster_.kv_get(key, timeout);
    }
    void kv_wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
      cluster_.kv_wait(keys, timeout);
    }
    void check_collective(const std::string& communicator, std::uint64_t step, const std::vector<int>& participants,
                          const std::string& signature, std::chrono::milliseconds timeout) override {
      cluster_.check_collective(index_, communicator, step, participants, signature, timeout);
    }
    void barrier(const std::string& name, std::chrono::milliseconds timeout) override {
      cluster_.barrier(index_, name, timeout);
    }
    void check_alive(const std::vector<int>& processes) const override { cluster_.check_alive(processes); }
    std::optional<std::string> failure_of(int p) const override { return cluster_.failure_reason(p); }
    const std::string& secret() const noexcept override { return secret_; }
    void set_secret(std::string secret) { secret_ = std::move(secret); }

  private:
    local_cluster& cluster_;
    int index_;
    std::string secret_;
  };

  /// What the participants of one step issued, and how the step ended for everyone.
  struct step_record {
    std::map<int, std::string> issued; // process -> "signature over [participants]"
    std::exception_ptr outcome_error;  // set once the step failed (desync, timeout, failure)
    bool agreed = false;
  };

  static std::string list_text(const std::vector<int>& values) {
    std::string out = "[";
    for (std::size_t i = 0; i < values.size(); ++i)
      out += (i ? ", " : "") + std::to_string(values[i]);
    return out + "]";
  }

  static std::string ms_text(std::chrono::milliseconds t) { return std::to_string(t.count()) + " ms"; }

  // Called with mutex_ held: the first failed process among `processes`, or -1.
  int failed_among(const std::vector<int>& processes) const {
    for (int p : processes)
      if (failed_.count(p))
        return p;
    return -1;
  }

  static process_failure_error failure_of(int process, const std::string& what) {
    return process_failure_error("Process " + std::to_string(process) + " failed (" + what + ")", process);
  }

  void kv_set(const std::string& key, const std::string& value) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      kv_[key] = value;
    }
    cv_.notify_all();
  }

  std::string kv_get(const std::string& key, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> guard(mutex_);
    if (!cv_.wait_for(guard, timeout, [&] { return kv_.count(key) > 0; }))
      throw timeout_error("Timed out after " + ms_text(timeout) + " waiting for key '" + key + "'");
    return kv_.at(key);
  }

  void kv_wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> guard(mutex_);
    auto all_there = [&] {
      for (const auto& k : keys)
        if (!kv_.count(k))
          return false;
      return true;
    };
    if (!cv_.wait_for(guard, timeout, all_there)) {
      std::string missing;
      for (const auto& k : keys)
        if (!kv_.count(k))
          missing += (missing.empty() ? "'" : ", '") + k + "'";
      throw timeout_error("Timed out after " + ms_text(timeout) + " waiting for keys " + missing);
    }
  }

  void check_collective(int me, const std::string& communicator, std::uint64_t step,
                        const std::vector<int>& participants, const std::string& signature,
                        std::chrono::milliseconds timeout) {
    const std::string at = "communicator '" + communicator + "' step " + std::to_string(step);
    {
      std::unique_lock<std::mutex> guard(mutex_);
      ++checks_;
      auto& record = steps_[{communicator, step}];
      if (record.outcome_error)
        std::rethrow_exception(record.outcome_error);
      record.issued[me] = "'" + signature + "' over " + list_text(participants);
      cv_.notify_all();
      auto settled = [&] {
        if (record.outcome_error || record.agreed || failed_among(participants) >= 0)
          return true;
        for (int p : participants)
          if (!record.issued.count(p))
            return false;
        return true;
      };
      const bool in_time = cv_.wait_for(guard, timeout, settled);
      if (record.outcome_error)
        std::rethrow_exception(record.outcome_error);
      if (!record.agreed) {
        if (const int dead = failed_among(participants); dead >= 0) {
          record.outcome_error = std::make_exception_ptr(failure_of(dead, "at " + at));
        } else if (!in_time) {
          std::vector<int> missing;
          for (int p : participants)
            if (!record.issued.count(p))
              missing.push_back(p);
          record.outcome_error = std::make_exception_ptr(
            timeout_error("Timed out after " + ms_text(timeout) + " at " + at + ": processes " + list_text(missing)
                          + " never issued it (process " + std::to_string(me) + " issued '" + signature + "')"));
        } else {
          bool same = true;
          for (const auto& [process, what] : record.issued)
            same = same && what == record.issued.begin()->second;
          if (same) {
            record.agreed = true;
          } else {
            std::string who;
            for (const auto& [process, what] : record.issued)
              who += (who.empty() ? "" : "; ") + ("process " + std::to_string(process) + " issued " + what);
            record.outcome_error = std::make_exception_ptr(desync_error("Desync at " + at + ": " + who));
          }
        }
        cv_.notify_all();
        if (record.outcome_error)
          std::rethrow_exception(record.outcome_error);
      }
    }
  }

  void barrier(int me, const std::string& name, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> guard(mutex_);
    auto& b = barriers_[name];
    const auto generation = b.generation;
    b.arrived.insert(me);
    if (static_cast<int>(b.arrived.size()) == count_) {
      ++b.generation;
      b.arrived.clear();
      cv_.notify_all();
      return;
    }
    if (!cv_.wait_for(guard, timeout, [&] { return b.generation != generation; })) {
      std::vector<int> missing;
      for (int p = 0; p < count_; ++p)
        if (!b.arrived.count(p))
          missing.push_back(p);
      throw timeout_error("Timed out after " + ms_text(timeout) + " at barrier '" + name + "': processes "
                          + list_text(missing) + " never arrived");
    }
  }

  std::optional<std::string> failure_reason(int process) const {
    std::lock_guard<std::mutex> guard(mutex_);
    if (failed_.count(process))
      return std::string("marked failed by the test");
    return std::nullopt;
  }

  void check_alive(const std::vector<int>& processes) const {
    std::lock_guard<std::mutex> guard(mutex_);
    if (const int dead = failed_among(processes); dead >= 0)
      throw failure_of(dead, "marked failed by the test");
  }

  struct barrier_state {
    std::uint64_t generation = 0;
    std::set<int> arrived;
  };

  const int count_;
  std::vector<std::unique_ptr<view>> views_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, std::string> kv_;
  std::map<std::pair<std::string, std::uint64_t>, step_record> steps_;
  std::map<std::string, barrier_state> barriers_;
  std::set<int> failed_;
  std::uint64_t checks_ = 0;
};

} // namespace am::test
