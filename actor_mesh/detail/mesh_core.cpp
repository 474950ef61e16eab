#include "actormesh/actor_mesh/detail/mesh_core.hpp"

#include "actormesh/actor_mesh/actor_errors.hpp"
#include "actor_mesh/detail/gateway.hpp"
#include "actor_mesh/detail/mesh_serving.hpp"
#include "actor_mesh/detail/user_actor.hpp"
#include "actor_mesh/detail/worker_meshes.hpp"
#include "actors/cluster_services.hpp"
#include "actors/detail/log.hpp"
#include "devices/detail/actor_system_of.hpp"
#include "actormesh/devices/options.hpp"
#include "devices/runtime_context.hpp"

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/weak_intrusive_ptr.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace am::detail {

namespace {

/// A mesh's actors and the gate every post passes: whoever refuses posts (a stop, a policy, the
/// runtime stopping) waits until no post is between its check and its send, so nothing lands behind
/// a stop message and nothing touches an actor handle once the runtime has let go of its actors.
class actor_group {
public:
  std::vector<std::shared_ptr<actor_cell>> cells;
  std::vector<caf::actor> actors; ///< by rank; null for another process's actor; emptied (under
                                  ///< `mutex`, posts refused) when the runtime stops
  std::mutex mutex;               ///< held while messages go to every actor (stop, fail, kill)

  /// Queues `task` at actor `r`, or refuses it once posts are refused.
  void post(std::size_t r, task_ptr task) {
    posting_.fetch_add(1);
    if (refusing_.load()) {
      posting_.fetch_sub(1);
      task->refuse(refusal(static_cast<int>(r)));
      return;
    }
    cells[r]->in_flight.fetch_add(1, std::memory_order_relaxed);
    if (cells[r]->inbox.push(std::move(task)))
      send_wake(actors[r]);
    posting_.fetch_sub(1);
  }

  /// From now on every post is refused with `why` (the first reason stays); returns once no post
  /// is under way.
  void refuse_posts(const std::string& why) {
    {
      std::lock_guard<std::mutex> guard(refusal_mutex_);
      if (!refusing_.load()) {
        refusal_ = why;
        refusing_.store(true);
      }
    }
    while (posting_.load() != 0)
      std::this_thread::yield();
  }

  bool refusing() const noexcept { return refusing_.load(); }

  /// Marks another process's actor `r` failed with `error` (the first failure stays).
  void fail_remote(std::size_t r, std::exception_ptr error) {
    std::lock_guard<std::mutex> guard(refusal_mutex_);
    if (remote_failures_.size() < cells.size())
      remote_failures_.resize(cells.size());
    if (!remote_failures_[r])
      remote_failures_[r] = std::move(error);
  }

  /// Why another process's actor `r` refuses calls, or null (posts refused: the refusal).
  std::exception_ptr remote_refusal(std::size_t r) const {
    if (refusing_.load())
      return refusal(static_cast<int>(r));
    std::lock_guard<std::mutex> guard(refusal_mutex_);
    return r < remote_failures_.size() ? remote_failures_[r] : nullptr;
  }

  std::exception_ptr refusal(int rank) const {
    std::lock_guard<std::mutex> guard(refusal_mutex_);
    return std::make_exception_ptr(actor_failure_error(refusal_, rank));
  }

private:
  std::atomic<int> posting_{0};
  std::atomic<bool> refusing_{false};
  mutable std::mutex refusal_mutex_;
  std::string refusal_;
  std::vector<std::exception_ptr> remote_failures_; ///< by rank, under refusal_mutex_
};

/// Every actor group of one runtime: a service of the runtime, so that stopping the runtime kills
/// the actors (a detached actor nobody stops would keep the actor system from going) and lets go
/// of their handles while the actor system is there, whatever mesh handles the program still holds.
class actor_store {
public:
  explicit actor_store(caf::actor_system& system) : system_(system) {}
  ~actor_store() {
    std::vector<caf::weak_actor_ptr> killed;
    for (auto& [id, group] : groups_) {
      group->refuse_posts("The actormesh runtime has stopped: its actors are gone");
      std::lock_guard<std::mutex> guard(group->mutex);
      for (std::size_t r = 0; r < group->actors.size(); ++r)
        if (group->actors[r]) {
          killed.emplace_back(caf::actor_cast<caf::weak_actor_ptr>(group->actors[r]));
          send_kill(group->actors[r], *group->cells[r]);
        }
      group->actors.clear();
    }
    await_gone(killed);
  }
  actor_store(const actor_store&) = delete;
  actor_store& operator=(const actor_store&) = delete;

  caf::actor_system& system() { return system_; }


  std::uint64_t add(std::shared_ptr<actor_group> group) {
    std::lock_guard<std::mutex> guard(mutex_);
    groups_.emplace(++last_id_, std::move(group));
    return last_id_;
  }

  /// The group's actors have stopped by themselves.
  void remove(std::uint64_t id) {
    std::lock_guard<std::mutex> guard(mutex_);
    groups_.erase(id);
  }

private:
  /// Waits (at most 10 s) until every actor of `killed` has been destroyed, which happens only
  /// once it has finished exiting, so that the actor system goes afterwards. Why (CAF 0.17.6): a
  /// detached actor's exit ends with a push to the actor clock (cancel_timeouts), after its exit
  /// hooks; ~actor_system stops the clock's thread once every actor has unregistered, and a push
  /// that finds the clock's ring buffer full then waits forever (seen: 64 relays and 64 counters
  /// killed at once hung in await_detached_threads). The store holds no handle to them by now.
  static void await_gone(const std::vector<caf::weak_actor_ptr>& killed) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (auto& actor : killed)
      while (actor.lock() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
  }

  caf::actor_system& system_;
  std::mutex mutex_;
  std::uint64_t last_id_ = 0;
  std::map<std::uint64_t, std::shared_ptr<actor_group>> groups_;
};

/// How busy an actor is: its calls queued or running, and its coroutine calls awaiting something.
int load_of(const actor_cell& cell) {
  return cell.in_flight.load(std::memory_order_relaxed) + cell.coroutine_calls.load(std::memory_order_relaxed);
}

const service_key<actor_store> actor_store_key{"actor meshes"};

/// The key of the next collective spawn of `class_name` in this process: every process spawns the
/// same meshes in the same order, so the n-th spawn of a class has the same key everywhere.
std::string next_collective_key(const std::string& class_name) {
  static std::mutex mutex;
  static std::map<std::string, std::uint64_t> counts;
  std::lock_guard<std::mutex> guard(mutex);
  return class_name + "#" + std::to_string(++counts[class_name]);
}

} // namespace

class mesh_core final : public actor_supervisor {
public:
  mesh_core(std::string class_name, supervision_policy policy) : class_name_(std::move(class_name)), policy_(policy) {}

  ~mesh_core() override { stop(); }

  mesh_core(const mesh_core&) = delete;
  mesh_core& operator=(const mesh_core&) = delete;

  /// Spawns this process's actors of `layout`. `remote` builds the points of a single-controller
  /// cluster's workers (on its controller); `part_key` names a worker's part of its controller's
  /// mesh (empty otherwise).
  void start(const actor_layout& layout, const actor_factory& factory, std::weak_ptr<mesh_core> self,
             std::shared_ptr<const std::vector<endpoint_entry>> endpoints, const remote_construction* remote,
             const std::string& part_key) {
    auto context = current_context();
    auto own = context->process_index();
    std::set<int> elsewhere; // the other processes that own points
    for (auto& point : layout.points())
      if (point.process != own)
        elsewhere.insert(point.process);
    bool controller = context->worker_hosts() != nullptr;
    bool part = !part_key.empty();
    // Every spawn of a multi-controller cluster is collective, whatever its points: the rule must
    // be the same in every process (a mesh all in process 0 is local there, remote elsewhere).
    bool collective = !controller && !part && context->config().role == process_role::peer
                      && context->cluster().process_count() > 1;
    bool drives_workers = controller && !elsewhere.empty();
    if (!elsewhere.empty() && !collective && !drives_workers && !part)
      throw value_error("spawning actors of class '" + class_name_
                        + "' in other processes: a worker process spawns actor meshes in its own process only "
                          "(its controller spawns over the workers)");
    endpoints_ = std::move(endpoints);
    auto store = context->service(actor_store_key, [&] { return std::make_shared<actor_store>(actor_system_of(*context)); });
    std::shared_ptr<actor_gateway> gateway;
    if (collective || drives_workers || part) {
      gateway = gateway_of(*context);
      gateway_ = gateway; // before the actors: a constructor's failure may be reported at once
      key_ = part ? part_key : next_collective_key(class_name_);
    }
    auto shared_factory = std::make_shared<const actor_factory>(factory);
    std::vector<actor_point> points;
    for (std::size_t r = 0; r < layout.size(); ++r) {
      auto cell = std::make_shared<actor_cell>();
      cell->context.class_name = class_name_;
      cell->context.axis_names = layout.axis_names();
      cell->context.axis_sizes = layout.axis_sizes();
      cell->context.point = layout.points()[r];
      cell->context.point.rank = static_cast<int>(r);
      cell->context.point.coords = row_major_coords(static_cast<std::int64_t>(r), layout.axis_sizes());
      cell->supervisor = self;
      points.push_back(cell->context.point);
      local_.push_back(cell->context.point.process == own);
      group_->cells.push_back(cell);
      group_->actors.push_back(cell->context.point.process == own ? spawn_user_actor(store->system(), cell, shared_factory)
                                                                 : caf::actor{});
    }
    layout_.emplace(layout.axis_names(), layout.axis_sizes(), std::move(points));
    store_ = store;
    store_id_ = store->add(group_);
    context_ = context;
    if (gateway)
      register_mesh(*gateway, key_, self);
    if (collective) {
      connect_lower_peers(*gateway);
      // Every process has registered its part (and opened its connections) before any call can
      // reach it.
      context->cluster().barrier("am.actor_mesh.spawn." + key_, context->config().collective_timeout);
    }
    if (drives_workers) {
      std::vector<int> workers(elsewhere.begin(), elsewhere.end());
      spawn_in_workers(*context, workers, key_, class_name_, *layout_, policy_, *remote, context->config().collective_timeout);
      worker_parts_ = std::move(workers); // stopped with the mesh from now on
    }
  }

  bool is_local(int rank) const { return local_[checked(rank)]; }

  void post_remote(int rank, const std::string& endpoint, std::string arguments, answer_callback answer) {
    auto r = checked(rank);
    auto& cell = *group_->cells[r];
    if (auto refusal = group_->remote_refusal(r)) {
      if (answer)
        answer(refusal, {});
      return;
    }
    auto context = context_.lock();
    auto gateway = gateway_.lock();
    if (!context || !gateway) {
      if (answer)
        answer(std::make_exception_ptr(runtime_error("The actormesh runtime has stopped: no new calls are accepted")), {});
      return;
    }
    std::optional<runtime_context::call_guard> guard; // the gateway's actors stay while this call is sent
    try {
      guard.emplace(*context);
    } catch (...) { // the runtime is stopping
      if (answer)
        answer(std::current_exception(), {});
      return;
    }
    if (answer) {
      cell.in_flight.fetch_add(1, std::memory_order_relaxed);
      answer = [answer = std::move(answer), counted = group_->cells[r]](const std::exception_ptr& e, const std::string& v) {
        counted->in_flight.fetch_sub(1, std::memory_order_relaxed);
        answer(e, v);
      };
    }
    send_call(*gateway, cell.context.point.process, actor_call{key_, rank, endpoint, 0, std::move(arguments)},
              who(cell), rank, std::move(answer));
  }

  /// A worker's part: its supervision events go to process `controller` too.
  void report_to(int controller) {
    std::lock_guard<std::mutex> guard(events_mutex_);
    report_to_ = controller;
  }

  /// Connects to the gateway events are forwarded to now, so that the actors' threads do not wait
  /// for the connection (an event forwarded before it is there connects on the actor's thread).
  void connect_reporting() {
    std::optional<int> to;
    {
      std::lock_guard<std::mutex> guard(events_mutex_);
      to = report_to_;
    }
    if (auto gateway = gateway_.lock(); gateway && to)
      connect_to(*gateway, *to);
  }

  void serve(actor_call call, std::function<void(const actor_answer&)> reply) {
    if (call.endpoint == supervision_endpoint) {
      take_forwarded_event(call);
      return; // one-way: nothing to answer
    }
    if (call.rank < 0 || static_cast<std::size_t>(call.rank) >= local_.size() || !local_[static_cast<std::size_t>(call.rank)]) {
      reply(error_answer(call.request, std::make_exception_ptr(value_error(
                                         "actor mesh '" + key_ + "' has no actor of rank " + std::to_string(call.rank)
                                         + " in this process"))));
      return;
    }
    const endpoint_entry* entry = endpoints_ ? find_endpoint(*endpoints_, call.endpoint) : nullptr;
    if (!entry) {
      reply(error_answer(call.request, std::make_exception_ptr(value_error(
                                         "actor class '" + class_name_ + "' has no endpoint '" + call.endpoint + "'"))));
      return;
    }
    auto request = call.request;
    remote_reply answer = [reply = std::move(reply), request](const std::exception_ptr& error, std::string value) {
      if (error) {
        reply(error_answer(request, error));
        return;
      }
      actor_answer ok;
      ok.request = request;
      ok.ok = true;
      ok.value = std::move(value);
      reply(ok);
    };
    task_ptr task;
    try {
      task = entry->remote_task(std::move(call.arguments), answer, request == 0);
    } catch (...) { // an endpoint whose types cannot travel
      answer(std::current_exception(), {});
      return;
    }
    group_->post(static_cast<std::size_t>(call.rank), std::move(task));
  }

  void remote_process_failed(int process, const std::string& notice) {
    for (std::size_t r = 0; r < group_->cells.size(); ++r) {
      auto& cell = *group_->cells[r];
      if (cell.context.point.process != process || local_[r])
        continue;
      auto cause = std::make_exception_ptr(process_failure_error(notice, process));
      group_->fail_remote(r, std::make_exception_ptr(actor_failure_error(who(cell) + " failed: " + notice, static_cast<int>(r))));
      auto event = event_of(cell, cause);
      event.what = supervision_event::kind::failed;
      report(event);
    }
  }

  void post(int rank, task_ptr task) { group_->post(checked(rank), std::move(task)); }

  int least_loaded(const std::vector<int>& ranks) {
    if (ranks.empty())
      throw value_error("choose: the actor mesh is empty");
    auto start = turn_.fetch_add(1, std::memory_order_relaxed) % ranks.size();
    int best = ranks[start];
    int load = load_of(*group_->cells[checked(best)]);
    for (std::size_t k = 1; k < ranks.size() && load > 0; ++k) {
      int candidate = ranks[(start + k) % ranks.size()];
      int l = load_of(*group_->cells[checked(candidate)]);
      if (l < load) {
        best = candidate;
        load = l;
      }
    }
    return best;
  }

  future<void> stop() {
    std::lock_guard<std::mutex> guard(group_->mutex);
    if (stopped_)
      return *stopped_;
    group_->refuse_posts("actor mesh of class '" + class_name_ + "' was stopped");
    promise<void> done;
    stopped_ = done.get_future();
    if (group_->actors.empty()) { // never started, or the runtime has stopped
      done.set_value();
      return *stopped_;
    }
    if (auto gateway = gateway_.lock())
      unregister_mesh(*gateway, key_);
    std::size_t local = 0;
    for (auto& actor : group_->actors)
      local += actor ? 1 : 0;
    // Done once every local actor has stopped and, on a controller, every worker's part.
    auto remaining = std::make_shared<std::atomic<std::size_t>>(local + 1);
    auto finish_one = [remaining, done, store = store_, id = store_id_]() mutable {
      if (remaining->fetch_sub(1) != 1)
        return;
      if (auto s = store.lock())
        s->remove(id);
      done.set_value();
    };
    for (auto& actor : group_->actors)
      if (actor)
        send_stop(actor, finish_one);
    stop_worker_parts(finish_one);
    return *stopped_;
  }

  failure_outcome actor_failed(actor_cell& cell, const std::exception_ptr& cause) override {
    auto now = std::chrono::steady_clock::now();
    auto& restarts = cell.restarts;
    while (!restarts.empty() && now - restarts.front() > policy_.window)
      restarts.pop_front();
    auto event = event_of(cell, cause);
    if (static_cast<int>(restarts.size()) < policy_.max_restarts && !group_->refusing()) {
      restarts.push_back(now);
      event.what = supervision_event::kind::restarted;
      report(event);
      return {true, nullptr};
    }
    auto what = who(cell) + " failed: " + event.cause;
    auto error = std::make_exception_ptr(actor_failure_error(what, cell.context.point.rank));
    if (policy_.stop_mesh) {
      event.what = supervision_event::kind::mesh_stopped;
      auto why = "actor mesh of class '" + class_name_ + "' was stopped by its policy: " + what;
      group_->refuse_posts(why);
      std::lock_guard<std::mutex> guard(group_->mutex);
      for (std::size_t r = 0; r < group_->actors.size(); ++r)
        if (group_->cells[r].get() != &cell && group_->actors[r])
          send_fail(group_->actors[r], std::make_exception_ptr(actor_failure_error(why, static_cast<int>(r))));
    }
    report(event);
    return {false, error};
  }

  void one_way_failed(actor_cell& cell, const std::exception_ptr& cause) override {
    auto event = event_of(cell, cause);
    event.what = supervision_event::kind::broadcast_failed;
    report(event);
  }

  void set_callback(std::function<void(const supervision_event&)> callback) {
    std::lock_guard<std::mutex> guard(events_mutex_);
    callback_ = std::make_shared<std::function<void(const supervision_event&)>>(std::move(callback));
  }

  std::vector<supervision_event> events() const {
    std::lock_guard<std::mutex> guard(events_mutex_);
    return events_;
  }

  const std::string& class_name() const noexcept { return class_name_; }
  const actor_layout& layout() const { return *layout_; }

private:
  std::size_t checked(int rank) const {
    if (rank < 0 || static_cast<std::size_t>(rank) >= group_->cells.size())
      throw value_error("actor rank " + std::to_string(rank) + " is out of range for a mesh of "
                        + std::to_string(group_->cells.size()));
    return static_cast<std::size_t>(rank);
  }

  /// Asks the workers that hold parts of this mesh to stop them, then calls `finished` (at once
  /// when there are none, or when the runtime is stopping: the workers' runtimes stop with it).
  void stop_worker_parts(std::function<void()> finished) {
    auto context = context_.lock();
    if (worker_parts_.empty() || !context) {
      finished();
      return;
    }
    try {
      stop_in_workers(*context, worker_parts_, key_).on_ready(std::move(finished));
    } catch (...) { // the runtime is stopping
      finished();
    }
  }

  /// "actor 'trainer' at {host: 1, device: 0} (process 1)".
  std::string who(const actor_cell& cell) const {
    return "actor '" + class_name_ + "' at " + point_string(cell.context.axis_names, cell.context.point.coords)
           + " (process " + std::to_string(cell.context.point.process) + ")";
  }

  supervision_event event_of(const actor_cell& cell, const std::exception_ptr& cause) const {
    return event_of_text(cell, describe_exception(cause));
  }

  supervision_event event_of_text(const actor_cell& cell, std::string cause) const {
    supervision_event event;
    event.class_name = class_name_;
    event.rank = cell.context.point.rank;
    event.coords = cell.context.point.coords;
    event.point = point_string(cell.context.axis_names, cell.context.point.coords);
    event.process = cell.context.point.process;
    event.cause = std::move(cause);
    return event;
  }

  void report(const supervision_event& event) {
    std::shared_ptr<std::function<void(const supervision_event&)>> callback;
    std::optional<int> forward_to;
    {
      std::lock_guard<std::mutex> guard(events_mutex_);
      events_.push_back(event);
      callback = callback_;
      forward_to = report_to_;
    }
    if (callback && *callback)
      (*callback)(event);
    if (forward_to)
      if (auto gateway = gateway_.lock())
        send_call(*gateway, *forward_to, actor_call{key_, event.rank, supervision_endpoint, 0, encode_event(event)},
                  "the controller's mesh '" + key_ + "'", event.rank, nullptr);
  }

  /// An event a worker's part forwarded: kept if it names an actor this process does not run
  /// (a peer cannot pass off events of this process's own actors), dropped otherwise.
  void take_forwarded_event(const actor_call& call) {
    supervision_event event;
    try {
      event = decode_event(call.arguments);
    } catch (const std::exception& e) {
      log(log_level::warning, "actor mesh '{}': dropped a malformed supervision event: {}", key_, e.what());
      return;
    }
    if (event.rank < 0 || static_cast<std::size_t>(event.rank) >= local_.size() || local_[static_cast<std::size_t>(event.rank)]
        || event.rank != call.rank) {
      log(log_level::warning, "actor mesh '{}': dropped a supervision event for rank {}", key_, event.rank);
      return;
    }
    // What the layout says, not what the sender says, names the actor.
    auto& cell = *group_->cells[static_cast<std::size_t>(event.rank)];
    auto kind = event.what;
    auto cause = std::move(event.cause);
    event = event_of_text(cell, std::move(cause));
    event.what = kind;
    report(event);
  }

  std::string class_name_;
  supervision_policy policy_;
  std::optional<actor_layout> layout_;
  std::shared_ptr<const std::vector<endpoint_entry>> endpoints_; ///< what calls from other processes may run
  std::vector<bool> local_;                  ///< by rank: the actor runs in this process
  std::string key_;                          ///< the key at the gateways (empty: this process only)
  std::weak_ptr<actor_gateway> gateway_;     ///< a collective spawn's
  std::vector<int> worker_parts_;            ///< on a controller: the workers holding parts of it
  std::weak_ptr<runtime_context> context_;
  std::shared_ptr<actor_group> group_ = std::make_shared<actor_group>();
  std::weak_ptr<actor_store> store_;
  std::uint64_t store_id_ = 0;
  std::atomic<std::uint64_t> turn_{0};
  std::optional<future<void>> stopped_; ///< guarded by group_->mutex
  mutable std::mutex events_mutex_;
  std::vector<supervision_event> events_;
  std::optional<int> report_to_; ///< a worker's part: the controller it forwards its events to
  std::shared_ptr<std::function<void(const supervision_event&)>> callback_;
};

std::shared_ptr<mesh_core> spawn_mesh(std::string class_name, const actor_layout& layout, actor_factory factory,
                                      supervision_policy policy,
                                      std::shared_ptr<const std::vector<endpoint_entry>> endpoints,
                                      remote_construction remote) {
  auto core = std::make_shared<mesh_core>(std::move(class_name), policy);
  core->start(layout, factory, core, std::move(endpoints), &remote, {});
  return core;
}

std::shared_ptr<mesh_core> spawn_mesh_part(std::string key, std::string class_name, const actor_layout& layout,
                                           actor_factory factory, supervision_policy policy,
                                           std::shared_ptr<const std::vector<endpoint_entry>> endpoints,
                                           int controller) {
  auto core = std::make_shared<mesh_core>(std::move(class_name), policy);
  core->report_to(controller); // before any actor is there to fail (a constructor's event goes too)
  core->start(layout, factory, core, std::move(endpoints), nullptr, key);
  core->connect_reporting();
  return core;
}

bool is_local(const mesh_core& core, int rank) { return core.is_local(rank); }

void post_remote(mesh_core& core, int rank, const std::string& endpoint, std::string arguments, answer_callback answer) {
  core.post_remote(rank, endpoint, std::move(arguments), std::move(answer));
}

void serve_remote_call(mesh_core& core, actor_call call, std::function<void(const actor_answer&)> reply) {
  core.serve(std::move(call), std::move(reply));
}

void remote_process_failed(mesh_core& core, int process, const std::string& notice) {
  core.remote_process_failed(process, notice);
}

void post(mesh_core& core, int rank, task_ptr task) { core.post(rank, std::move(task)); }

int least_loaded(mesh_core& core, const std::vector<int>& ranks) { return core.least_loaded(ranks); }

future<void> stop_mesh(mesh_core& core) { return core.stop(); }

void on_supervision(mesh_core& core, std::function<void(const supervision_event&)> callback) {
  core.set_callback(std::move(callback));
}

std::vector<supervision_event> supervision_events(const mesh_core& core) { return core.events(); }

const actor_layout& spawned_layout(const mesh_core& core) { return core.layout(); }

const std::string& class_name_of(const mesh_core& core) { return core.class_name(); }

} // namespace am::detail
