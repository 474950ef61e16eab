#include "cluster/cluster_client.hpp"

#include "cluster/cluster_messages.hpp"
#include "actors/detail/log.hpp"
#include "actormesh/actors/errors.hpp"
#include "actormesh/actors/future.hpp"
#include "observability/stats_wire.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/system_messages.hpp>

#include <map>
#include <mutex>

namespace am::detail {

namespace {
using clock = std::chrono::steady_clock;
} // namespace

/// What the client actor and user threads share.
struct client_shared {
  mutable std::mutex mutex;
  std::uint64_t next_req = 1;
  std::map<std::uint64_t, promise<std::string>> pending;
  promise<std::string> joined;
  std::map<int, std::string> failed;          ///< process -> notice
  std::map<int, caf::actor> call_servers;     ///< workers' (on the controller)
  std::vector<std::function<void(int, const std::string&)>> failure_listeners;
  std::optional<std::string> coordinator_lost;
  bool expelled = false;                      ///< the supervisor declared this very process failed
  std::optional<std::string> closed;          ///< the runtime stopped: why
  bool leaving = false;                       ///< leave() was called: the coordinator may go
  cluster_directory directory;
  int process = 0;
  int process_count = 1;
  std::string coordinator;

  /// The error a failure reply stands for (under the mutex or not: reads the directory only).
  std::exception_ptr error_for(const cluster_reply& r) const {
    switch (r.code) {
    case reply_code::timeout:
      return std::make_exception_ptr(timeout_error(r.message));
    case reply_code::process_failure:
      return std::make_exception_ptr(process_failure_error(r.message, r.process, directory.device_ids_of(r.process)));
    case reply_code::desync:
      return std::make_exception_ptr(desync_error(r.message));
    default:
      return std::make_exception_ptr(value_error(r.message));
    }
  }

  /// The error of a process the supervisor declared failed (a stopped one that resumed): it is out.
  std::exception_ptr expelled_error() const {
    auto it = failed.find(process);
    return std::make_exception_ptr(process_failure_error(
      "This process (" + std::to_string(process) + ") was declared failed by the coordinator: "
        + (it == failed.end() ? std::string("unknown reason") : it->second),
      process, directory.device_ids_of(process)));
  }

  /// Why requests cannot go on once the coordinator is out of reach; a process that the coordinator
  /// declared failed first is told that, since that is why the coordinator stopped answering it.
  std::exception_ptr coordinator_error() const {
    if (expelled)
      return expelled_error();
    return std::make_exception_ptr(process_failure_error(*coordinator_lost, 0, directory.device_ids_of(0)));
  }

  /// Fails every waiting request (and the join) with `error`.
  void fail_all(const std::exception_ptr& error) {
    std::map<std::uint64_t, promise<std::string>> waiting;
    {
      std::lock_guard<std::mutex> guard(mutex);
      waiting.swap(pending);
    }
    for (auto& [req, p] : waiting)
      p.set_error(error);
    joined.set_error(error);
  }

  /// Resolves one request from its reply bytes.
  void resolve(std::uint64_t req, const std::string& bytes) {
    promise<std::string> p;
    {
      std::lock_guard<std::mutex> guard(mutex);
      auto it = pending.find(req);
      if (it == pending.end())
        return; // timed out on the caller's side already
      p = std::move(it->second);
      pending.erase(it);
    }
    try {
      auto r = decode_reply(bytes);
      if (r.code == reply_code::ok)
        p.set_value(std::move(r.value));
      else
        p.set_error(error_for(r));
    } catch (const std::exception& e) {
      p.set_error(std::make_exception_ptr(value_error(e.what())));
    }
  }
};

namespace {

struct client_state {
  std::shared_ptr<client_shared> shared;
  caf::actor supervisor;
  client_config config;
  clock::time_point last_answer;
  clock::time_point last_tick;
  bool formed = false;
};

using client_actor = caf::stateful_actor<client_state>;

void lose_coordinator(client_actor* self, const std::string& why) {
  auto& sh = *self->state.shared;
  {
    std::lock_guard<std::mutex> guard(sh.mutex);
    if (sh.coordinator_lost)
      return;
    sh.coordinator_lost = "The coordinator (process 0 at " + sh.coordinator + ") is gone: " + why;
  }
  log(sh.leaving ? log_level::info : log_level::warning, "cluster: {}", *sh.coordinator_lost);
  sh.fail_all(sh.coordinator_error());
}

/// Process `p` was declared failed: logged once, recorded, and told to the failure listeners (a
/// notice of this process itself fails every pending request: it is out of the cluster).
void note_failure(client_shared& sh, int p, const std::string& notice) {
  {
    std::lock_guard<std::mutex> guard(sh.mutex);
    if (sh.failed.count(p))
      return; // told again (the supervisor repeats it to a failed process that still speaks)
  }
  log(log_level::warning, "cluster: {}", notice);
  std::vector<std::function<void(int, const std::string&)>> listeners;
  {
    std::lock_guard<std::mutex> guard(sh.mutex);
    sh.failed[p] = notice;
    if (p == sh.process)
      sh.expelled = true;
    listeners = sh.failure_listeners;
  }
  if (p == sh.process)
    sh.fail_all(sh.expelled_error()); // the supervisor answers none of them any more
  for (auto& listener : listeners)
    listener(p, notice);
}

caf::behavior client_behavior(client_actor* self, std::shared_ptr<client_shared> shared, caf::actor supervisor,
                              std::string join_bytes, client_config config) {
  auto& st = self->state;
  st.shared = std::move(shared);
  st.supervisor = std::move(supervisor);
  st.config = config;
  st.last_answer = clock::now();
  st.last_tick = st.last_answer;
  self->set_default_handler(caf::drop);
  self->monitor(st.supervisor);
  self->set_down_handler([self](caf::down_msg& msg) {
    if (msg.source == self->state.supervisor.address())
      lose_coordinator(self, "the connection to it was lost (it died or closed it)");
  });
  self->send(st.supervisor, join_atom::value, join_bytes);
  if (config.call_server)
    self->send(st.supervisor, call_server_atom::value, static_cast<std::int32_t>(st.shared->process),
               config.call_server);
  if (config.heartbeat_interval.count() > 0)
    self->send(self, tick_atom::value);
  return {
    [self](joined_atom, const std::string& bytes) {
      auto& sh = *self->state.shared;
      try {
        auto r = decode_reply(bytes);
        if (r.code != reply_code::ok) {
          sh.joined.set_error(sh.error_for(r));
          return;
        }
        auto dir = decode_directory(r.value);
        {
          std::lock_guard<std::mutex> guard(sh.mutex);
          sh.directory = std::move(dir);
        }
        self->state.formed = true;
        self->state.last_answer = clock::now();
        sh.joined.set_value(std::string{});
      } catch (const std::exception& e) {
        sh.joined.set_error(std::make_exception_ptr(value_error(e.what())));
      }
    },
    [self](reply_atom, std::uint64_t req, const std::string& bytes) {
      self->state.last_answer = clock::now();
      self->state.shared->resolve(req, bytes);
    },
    [self](failed_atom, const std::string& bytes) {
      if (self->current_sender() != caf::actor_cast<caf::strong_actor_ptr>(self->state.supervisor))
        return; // only the supervisor declares failures
      std::vector<declared_failure> failures;
      try {
        failures = decode_failures(bytes);
      } catch (const std::exception& e) {
        log(log_level::warning, "cluster: dropped a failure notice: {}", e.what());
        return;
      }
      for (auto& f : failures)
        note_failure(*self->state.shared, f.process, f.notice);
    },
    [self](call_server_atom, std::int32_t p, caf::actor server) {
      if (self->current_sender() != caf::actor_cast<caf::strong_actor_ptr>(self->state.supervisor))
        return; // only the supervisor hands out call servers
      auto& sh = *self->state.shared;
      std::lock_guard<std::mutex> guard(sh.mutex);
      sh.call_servers[p] = std::move(server);
    },
    [self](heartbeat_atom) { self->state.last_answer = clock::now(); },
    // `actormesh info --watch`, through the supervisor: this process's live counters.
    [self](stats::stats_atom) {
      auto& answer = self->state.config.answer_stats;
      return answer ? answer() : stats::answer_stats_request(self->state.shared->process, {});
    },
    [self](tick_atom) {
      auto& st = self->state;
      auto now = clock::now();
      // Ticks far apart mean this process itself was stopped (SIGSTOP, a suspended VM): the silence
      // is ours, so the coordinator gets a fresh timeout to answer, or to say it declared us failed.
      if (now - st.last_tick > st.config.heartbeat_interval * 4 + std::chrono::milliseconds(500))
        st.last_answer = now;
      st.last_tick = now;
      self->send(st.supervisor, heartbeat_atom::value, static_cast<std::int32_t>(st.shared->process));
      if (st.formed && clock::now() - st.last_answer > st.config.heartbeat_timeout)
        lose_coordinator(self, "it has not answered for "
                                   + std::to_string(st.config.heartbeat_timeout.count())
                                   + " ms (the heartbeat timeout): it is stopped, hung or cut off");
      self->delayed_send(self, st.config.heartbeat_interval, tick_atom::value);
    },
  };
}

} // namespace

cluster_client::cluster_client(caf::actor_system& system, caf::actor supervisor, join_request request,
                               client_config config)
    : shared_(std::make_shared<client_shared>()), supervisor_(std::move(supervisor)), request_(std::move(request)),
      config_(std::move(config)) {
  shared_->process = request_.process;
  shared_->process_count = request_.process_count;
  shared_->coordinator = config_.coordinator;
  actor_ = system.spawn(client_behavior, shared_, supervisor_, encode(request_), config_);
  // A detached call server is joined when the actor system goes, which waits for every handle to
  // it: the client actor's copy goes with its state, this one now.
  config_.call_server = nullptr;
}

cluster_client::~cluster_client() { close("The actormesh runtime has stopped"); }

void cluster_client::close(const std::string& why) {
  {
    std::lock_guard<std::mutex> guard(shared_->mutex);
    if (!shared_->closed)
      shared_->closed = why;
  }
  shared_->fail_all(std::make_exception_ptr(runtime_error(why)));
}

const cluster_directory& cluster_client::wait_joined(std::chrono::milliseconds timeout) {
  auto f = shared_->joined.get_future();
  if (!f.wait_for(timeout + answer_grace))
    throw timeout_error("Joining the cluster at " + config_.coordinator + " timed out after "
                        + std::to_string((timeout + answer_grace).count()) + " ms with no answer from it");
  f.get();
  return shared_->directory;
}

const cluster_directory& cluster_client::directory() const noexcept { return shared_->directory; }

int cluster_client::process_index() const noexcept { return shared_->process; }

int cluster_client::process_count() const noexcept { return shared_->process_count; }

std::optional<std::string> cluster_client::failure_of(int p) const {
  std::lock_guard<std::mutex> guard(shared_->mutex);
  auto it = shared_->failed.find(p);
  if (it == shared_->failed.end())
    return std::nullopt;
  return it->second;
}

bool cluster_client::coordinator_lost() const {
  std::lock_guard<std::mutex> guard(shared_->mutex);
  return shared_->coordinator_lost.has_value();
}

caf::actor cluster_client::call_server_of(int p) const {
  std::lock_guard<std::mutex> guard(shared_->mutex);
  auto it = shared_->call_servers.find(p);
  return it == shared_->call_servers.end() ? caf::actor{} : it->second;
}

void cluster_client::on_process_failure(std::function<void(int, const std::string&)> listener) {
  std::lock_guard<std::mutex> guard(shared_->mutex);
  shared_->failure_listeners.push_back(std::move(listener));
}

template <class Send>
std::string cluster_client::request(Send&& send, std::chrono::milliseconds timeout, const char* what,
                                    bool while_leaving, std::chrono::milliseconds grace) {
  promise<std::string> p;
  auto f = p.get_future();
  std::uint64_t req = 0;
  {
    std::lock_guard<std::mutex> guard(shared_->mutex);
    if (shared_->closed)
      throw runtime_error(*shared_->closed);
    if (shared_->leaving && !while_leaving)
      throw runtime_error("The actormesh runtime is stopping: this process has left the cluster");
    if (shared_->expelled)
      std::rethrow_exception(shared_->expelled_error());
    if (shared_->coordinator_lost)
      std::rethrow_exception(shared_->coordinator_error());
    req = shared_->next_req++;
    shared_->pending.emplace(req, std::move(p));
  }
  send(req);
  if (!f.wait_for(timeout + grace)) {
    std::lock_guard<std::mutex> guard(shared_->mutex);
    shared_->pending.erase(req);
    throw timeout_error(std::string(what) + " got no answer from the coordinator at " + config_.coordinator
                        + " within " + std::to_string((timeout + grace).count()) + " ms");
  }
  return f.get();
}

void cluster_client::kv_set(const std::string& key, const std::string& value) {
  request(
    [&](std::uint64_t req) {
      caf::send_as(actor_, supervisor_, kv_set_atom::value, static_cast<std::int32_t>(shared_->process), req, key,
                   value);
    },
    config_.default_timeout, "key_value_set");
}

std::string cluster_client::kv_get(const std::string& key, std::chrono::milliseconds timeout) {
  return request(
    [&](std::uint64_t req) {
      caf::send_as(actor_, supervisor_, kv_get_atom::value, static_cast<std::int32_t>(shared_->process), req, key,
                   static_cast<std::int64_t>(timeout.count()));
    },
    timeout, "blocking_key_value_get");
}

void cluster_client::kv_wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  auto deadline = clock::now() + timeout;
  for (auto& key : keys) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    kv_get(key, std::max(left, std::chrono::milliseconds(0)));
  }
}

void cluster_client::check_collective(const std::string& communicator, std::uint64_t step,
                                      const std::vector<int>& participants, const std::string& signature,
                                      std::chrono::milliseconds timeout) {
  check_alive(participants);
  auto bytes = encode(collective_check{communicator, step, participants, signature, timeout.count()});
  request(
    [&](std::uint64_t req) {
      caf::send_as(actor_, supervisor_, collective_atom::value, static_cast<std::int32_t>(shared_->process), req,
                   bytes);
    },
    timeout, "A collective");
}

void cluster_client::barrier(const std::string& name, std::chrono::milliseconds timeout) {
  request(
    [&](std::uint64_t req) {
      caf::send_as(actor_, supervisor_, barrier_atom::value, static_cast<std::int32_t>(shared_->process), req, name,
                   static_cast<std::int64_t>(timeout.count()));
    },
    timeout, "A barrier");
}

void cluster_client::check_alive(const std::vector<int>& processes) const {
  std::lock_guard<std::mutex> guard(shared_->mutex);
  if (shared_->expelled) // this process is out: that, not a peer's state, is what its caller needs to hear
    std::rethrow_exception(shared_->expelled_error());
  if (shared_->coordinator_lost)
    std::rethrow_exception(shared_->coordinator_error());
  for (int p : processes)
    if (auto it = shared_->failed.find(p); it != shared_->failed.end())
      throw process_failure_error(it->second, p, shared_->directory.device_ids_of(p));
}

bool cluster_client::leave(std::chrono::milliseconds timeout) noexcept {
  {
    std::lock_guard<std::mutex> guard(shared_->mutex);
    shared_->leaving = true;
  }
  try {
    request(
      [&](std::uint64_t req) {
        caf::send_as(actor_, supervisor_, leave_atom::value, static_cast<std::int32_t>(shared_->process), req);
      },
      timeout, "Leaving the cluster", /*while_leaving=*/true, /*grace=*/std::chrono::milliseconds(0));
    return true;
  } catch (const std::exception& e) {
    log(log_level::warning, "cluster: stopping without every process's agreement: {}", e.what());
    return false;
  }
}

} // namespace am::detail
