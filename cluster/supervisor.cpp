#include "cluster/supervisor.hpp"

#include "cluster/cluster_messages.hpp"
#include "cluster/membership.hpp"
#include "cluster/rendezvous_text.hpp"
#include "actors/detail/log.hpp"
#include "actormesh/actors/errors.hpp"
#include "observability/stats_wire.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/system_messages.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

namespace am::detail {

namespace {

using clock = std::chrono::steady_clock;

enum class member_status { absent, joined, left, failed };

/// One process as the supervisor knows it.
struct member {
  member_status status = member_status::absent;
  caf::actor client;
  std::string host;
  std::vector<device> devices;
  member_role role = member_role::peer;
  caf::actor call_server;  ///< a worker's: where the controller sends its device calls
  clock::time_point last_seen;
};

/// A request waiting for an answer.
struct waiter {
  int process = 0;
  std::uint64_t req = 0;
  clock::time_point deadline;
  std::int64_t timeout_ms = 0;
};

/// One barrier or collective step: who must come, who came with what, and how it ended when it
/// failed (late arrivals get the same answer at once).
struct rendezvous {
  std::string what;               ///< "barrier 'x'", "collective 3 of communicator 'c'"
  std::vector<int> participants;  ///< sorted
  std::map<int, std::pair<waiter, std::string>> arrived; ///< process -> (request, signature)
  std::optional<cluster_reply> outcome;
};

std::string comma_list(const std::vector<int>& values) {
  std::string out;
  for (int v : values)
    out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

std::string millis(std::int64_t ms) {
  if (ms % 1000 == 0)
    return std::to_string(ms / 1000) + " s";
  return std::to_string(ms) + " ms";
}

class supervisor_state {
public:
  caf::event_based_actor* self = nullptr;
  supervisor_config config;
  std::vector<member> members;
  bool formed = false;
  std::optional<cluster_reply> join_outcome; ///< set when joining failed for good
  clock::time_point join_deadline;
  cluster_directory directory;
  std::map<std::string, rendezvous> rendezvous_by_key;
  std::map<std::string, std::vector<std::uint64_t>> barrier_generations; ///< name -> per process
  std::map<std::string, std::string> store;
  std::map<std::string, std::vector<waiter>> store_waiters;
  std::vector<waiter> leave_waiters;

  // ---- sending -------------------------------------------------------------------------------

  void reply(int process, std::uint64_t req, const cluster_reply& r) {
    auto& m = members[static_cast<std::size_t>(process)];
    if (m.client && m.status != member_status::failed)
      self->send(m.client, reply_atom::value, req, encode(r));
  }

  void reply(const waiter& w, const cluster_reply& r) { reply(w.process, w.req, r); }

  static cluster_reply ok(std::string value = {}) { return {reply_code::ok, -1, {}, std::move(value)}; }

  // ---- identity ------------------------------------------------------------------------------

  /// True when the current message claims to come from `process` and does: its sender is that
  /// process's client. Anything else is dropped (a confused or hostile peer).
  /// `or_left`: a member that has left (and waits for the others) counts too.
  bool from_member(int process, bool or_left = false) {
    if (process < 0 || process >= config.process_count)
      return false;
    auto& m = members[static_cast<std::size_t>(process)];
    bool present = m.status == member_status::joined || (or_left && m.status == member_status::left);
    if (!present || !m.client)
      return false;
    return self->current_sender() == caf::actor_cast<caf::strong_actor_ptr>(m.client);
  }

  std::vector<int> all_processes() const {
    std::vector<int> out;
    for (int p = 0; p < config.process_count; ++p)
      out.push_back(p);
    return out;
  }

  /// The first participant that failed or left, if any, with the reply that says so.
  std::optional<cluster_reply> lost_participant(const std::vector<int>& participants) const {
    for (int p : participants) {
      if (p < 0 || p >= config.process_count)
        continue;
      auto& m = members[static_cast<std::size_t>(p)];
      if (m.status == member_status::failed)
        return cluster_reply{reply_code::process_failure, p,
                             failure_notice(p), {}};
      if (m.status == member_status::left)
        return cluster_reply{reply_code::process_failure, p,
                             describe_process(directory, p) + " has left the cluster (its runtime stopped)", {}};
    }
    return std::nullopt;
  }

  std::map<int, std::string> failures;
  std::vector<declared_failure> unsent_failures; ///< declared since the last batch went out
  bool flush_queued = false;                     ///< a flush_failures message is on its way

  std::string failure_text(int p) const {
    auto it = failures.find(p);
    return it == failures.end() ? "unknown reason" : it->second;
  }

  /// What every process is told when `p` is declared failed (the failed one too, when it speaks again).
  std::string failure_notice(int p) const { return describe_process(directory, p) + " failed: " + failure_text(p); }

  // ---- joining -------------------------------------------------------------------------------

  void fail_join(const cluster_reply& r) {
    join_outcome = r;
    for (auto& m : members)
      if (m.client)
        self->send(m.client, joined_atom::value, encode(r));
  }

  void on_join(const std::string& bytes) {
    auto sender = caf::actor_cast<caf::actor>(self->current_sender());
    if (!sender)
      return;
    join_request req;
    try {
      req = decode_join_request(bytes);
    } catch (const std::exception& e) {
      self->send(sender, joined_atom::value, encode(cluster_reply{reply_code::invalid, -1, e.what(), {}}));
      return;
    }
    auto refuse = [&](std::string why, bool whole_cluster) {
      cluster_reply r{reply_code::invalid, req.process, std::move(why), {}};
      self->send(sender, joined_atom::value, encode(r));
      if (whole_cluster && !formed)
        fail_join(r);
    };
    if (req.protocol != wire_protocol_version || req.version != config.version)
      return refuse("Process " + std::to_string(req.process) + " runs actormesh " + req.version
                        + " (wire protocol " + std::to_string(req.protocol) + "), but the coordinator at "
                        + config.coordinator + " runs actormesh " + config.version + " (wire protocol "
                        + std::to_string(wire_protocol_version)
                        + "): every process of a cluster must run the same build",
                    true);
    if (join_outcome)
      return refuse(join_outcome->message, false);
    if (formed)
      return refuse("The cluster at " + config.coordinator + " is already formed; process "
                        + std::to_string(req.process) + " cannot join it again",
                    false);
    if (req.process_count != config.process_count)
      return refuse("Process " + std::to_string(req.process) + " expects " + std::to_string(req.process_count)
                        + " processes, but the coordinator at " + config.coordinator + " expects "
                        + std::to_string(config.process_count),
                    true);
    if (req.process >= config.process_count)
      return refuse("Process index " + std::to_string(req.process) + " is out of range for "
                        + std::to_string(config.process_count) + " processes",
                    true);
    auto& m = members[static_cast<std::size_t>(req.process)];
    if (m.status != member_status::absent)
      return refuse("Process " + std::to_string(req.process) + " has already joined (from host " + m.host
                        + "); two processes were given the same process index",
                    false);
    m.status = member_status::joined;
    m.client = sender;
    m.host = req.host;
    m.devices = req.devices;
    m.role = req.role;
    m.last_seen = clock::now();
    self->monitor(sender);
    log(log_level::info, "supervisor: process {} joined from {} with {} devices", req.process, req.host,
        req.devices.size());
    maybe_form();
  }

  /// Forms the cluster once every process has joined and every worker's call server (which its
  /// client sends right after the join) is there.
  void maybe_form() {
    if (formed || join_outcome)
      return;
    bool complete = std::all_of(members.begin(), members.end(), [](auto& x) {
      return x.status == member_status::joined && (x.role != member_role::worker || x.call_server);
    });
    if (complete)
      form();
  }

  /// Why the members' roles do not make one cluster (empty when they do): all peers, or a
  /// controller as process 0 with workers.
  std::string role_conflict() const {
    auto first = members.front().role;
    auto expected = first == member_role::controller ? member_role::worker : member_role::peer;
    if (first == member_role::worker)
      return std::string("Process 0 joined as a worker, but process 0 hosts the coordinator: it must be the ")
             + "controller (single-controller) or a peer (multi-controller)";
    for (int p = 1; p < config.process_count; ++p) {
      auto& m = members[static_cast<std::size_t>(p)];
      if (m.role != expected)
        return "Process " + std::to_string(p) + " joined as a " + role_name(m.role) + ", but process 0 is a "
               + role_name(first) + ": a cluster is either peers that all run the program, or one controller "
               + "(process 0) and workers";
    }
    return {};
  }

  void form() {
    if (auto conflict = role_conflict(); !conflict.empty()) {
      fail_join({reply_code::invalid, -1, conflict, {}});
      return;
    }
    formed = true;
    int next_id = 0;
    for (int p = 0; p < config.process_count; ++p) {
      auto& m = members[static_cast<std::size_t>(p)];
      directory.hosts.push_back(m.host);
      directory.roles.push_back(m.role);
      for (auto d : m.devices) {
        d.id = next_id++;
        d.process_index = p;
        directory.devices.push_back(d);
      }
    }
    // The controller learns where to send each worker's device calls before it learns the
    // directory (one sender, one receiver: in this order).
    if (members.front().role == member_role::controller)
      for (int p = 1; p < config.process_count; ++p)
        self->send(members.front().client, call_server_atom::value, static_cast<std::int32_t>(p),
                   members[static_cast<std::size_t>(p)].call_server);
    auto reply_bytes = encode(ok(encode(directory)));
    for (auto& m : members)
      self->send(m.client, joined_atom::value, reply_bytes);
    log(log_level::info, "supervisor: cluster of {} processes formed", config.process_count);
  }

  void check_join_deadline(clock::time_point now) {
    if (formed || join_outcome || now < join_deadline)
      return;
    std::vector<int> missing;
    for (int p = 0; p < config.process_count; ++p)
      if (members[static_cast<std::size_t>(p)].status != member_status::joined)
        missing.push_back(p);
    fail_join({reply_code::timeout, -1,
               "Joining the cluster at " + config.coordinator + " timed out after "
                   + millis(config.join_timeout.count()) + ": process" + (missing.size() == 1 ? " " : "es ")
                   + join_list(missing) + " never joined ("
                   + std::to_string(config.process_count) + " expected)",
               {}});
  }

  // ---- failures ------------------------------------------------------------------------------

  void declare_failed(int p, const std::string& reason) {
    auto& m = members[static_cast<std::size_t>(p)];
    if (m.status == member_status::failed || m.status == member_status::left || m.status == member_status::absent)
      return;
    m.status = member_status::failed;
    failures[p] = reason;
    std::string text = "Process " + std::to_string(p) + " failed: " + reason;
    log(log_level::warning, "supervisor: {}", text);
    if (!formed) {
      fail_join({reply_code::process_failure, p, "Joining the cluster failed: " + text, {}});
      return;
    }
    unsent_failures.push_back({p, failure_notice(p)});
    if (!flush_queued) { // after the messages already queued: a lost host's members go as one batch
      flush_queued = true;
      self->send(self, flush_failures_atom::value);
    }
    fail_rendezvous_with(p);
    maybe_finish_leaving();
  }

  /// Tells every member that still listens (failed ones too: a stopped one that resumes learns it
  /// is out) of the failures declared since the last batch, in one message each.
  void flush_failures() {
    flush_queued = false;
    if (unsent_failures.empty())
      return;
    const std::string bytes = encode(unsent_failures);
    unsent_failures.clear();
    for (auto& m : members)
      if (m.client
          && (m.status == member_status::joined || m.status == member_status::left || m.status == member_status::failed))
        self->send(m.client, failed_atom::value, bytes);
  }

  /// Every pending barrier or collective that waits on `p` (failed or left) ends with the reply
  /// that says so.
  void fail_rendezvous_with(int p) {
    for (auto& [key, rv] : rendezvous_by_key) {
      if (rv.outcome || !std::binary_search(rv.participants.begin(), rv.participants.end(), p))
        continue;
      auto lost = lost_participant(rv.participants);
      if (!lost)
        continue;
      lost->message = rv.what + " cannot complete: " + lost->message;
      finish_failed(rv, *lost);
    }
  }

  void finish_failed(rendezvous& rv, const cluster_reply& r) {
    rv.outcome = r;
    for (auto& [p, arrival] : rv.arrived)
      reply(arrival.first, r);
  }

  // ---- barriers and collectives --------------------------------------------------------------

  void arrive(const std::string& key, std::string what, std::vector<int> participants, waiter w,
              std::string signature) {
    auto [it, fresh] = rendezvous_by_key.try_emplace(key);
    auto& rv = it->second;
    if (fresh) {
      rv.what = std::move(what);
      rv.participants = participants;
    }
    if (rv.outcome) {
      reply(w, *rv.outcome);
      return;
    }
    if (rv.arrived.count(w.process)) {
      reply(w, {reply_code::invalid, -1, rv.what + ": process " + std::to_string(w.process) + " arrived twice", {}});
      return;
    }
    rv.arrived.emplace(w.process, std::make_pair(w, std::move(signature)));
    if (auto lost = lost_participant(rv.participants)) {
      lost->message = rv.what + " cannot complete: " + lost->message;
      finish_failed(rv, *lost);
      return;
    }
    if (rv.arrived.size() < rv.participants.size())
      return;
    complete(it);
  }

  void complete(std::map<std::string, rendezvous>::iterator it) {
    auto& rv = it->second;
    auto& first = rv.arrived.begin()->second.second;
    bool same = std::all_of(rv.arrived.begin(), rv.arrived.end(), [&](auto& a) { return a.second.second == first; });
    if (same) {
      for (auto& [p, arrival] : rv.arrived)
        reply(arrival.first, ok());
      rendezvous_by_key.erase(it);
      return;
    }
    std::vector<std::pair<int, std::string>> issued;
    for (auto& [p, arrival] : rv.arrived)
      issued.emplace_back(p, arrival.second);
    finish_failed(rv, {reply_code::desync, -1, desync_text(rv.what, issued), {}});
  }

  void on_barrier(int process, std::uint64_t req, const std::string& name, std::int64_t timeout_ms) {
    if (!from_member(process) || !formed || timeout_ms < 0 || name.size() > 4096)
      return;
    auto& gens = barrier_generations[name];
    gens.resize(static_cast<std::size_t>(config.process_count), 0);
    auto gen = ++gens[static_cast<std::size_t>(process)];
    waiter w{process, req, clock::now() + std::chrono::milliseconds(timeout_ms), timeout_ms};
    arrive("b\x1f" + name + "\x1f" + std::to_string(gen), "Barrier '" + name + "'", all_processes(), w, {});
  }

  void on_collective(int process, std::uint64_t req, const std::string& bytes) {
    if (!from_member(process) || !formed)
      return;
    collective_check c;
    try {
      c = decode_collective_check(bytes);
    } catch (const std::exception& e) {
      reply(process, req, {reply_code::invalid, -1, e.what(), {}});
      return;
    }
    auto parts = c.participants;
    std::sort(parts.begin(), parts.end());
    parts.erase(std::unique(parts.begin(), parts.end()), parts.end());
    bool valid = parts.size() == c.participants.size() && std::binary_search(parts.begin(), parts.end(), process)
                 && parts.back() < config.process_count;
    if (!valid) {
      reply(process, req, {reply_code::invalid, -1,
                           "collective " + std::to_string(c.step) + " of communicator '" + c.communicator
                               + "': the participants [" + comma_list(c.participants)
                               + "] must be distinct process indices that include the caller ("
                               + std::to_string(process) + ")",
                           {}});
      return;
    }
    waiter w{process, req, clock::now() + std::chrono::milliseconds(c.timeout_ms), c.timeout_ms};
    // The participant list is part of what must agree.
    std::string signature = c.signature + " over processes [" + comma_list(parts) + "]";
    arrive("c\x1f" + c.communicator + "\x1f" + std::to_string(c.step),
           "Collective " + std::to_string(c.step) + " of communicator '" + c.communicator + "'", parts, w,
           std::move(signature));
  }

  void check_rendezvous_deadlines(clock::time_point now) {
    for (auto& [key, rv] : rendezvous_by_key) {
      if (rv.outcome)
        continue;
      for (auto& [p, arrival] : rv.arrived) {
        if (now < arrival.first.deadline)
          continue;
        std::vector<int> missing;
        for (int q : rv.participants)
          if (!rv.arrived.count(q))
            missing.push_back(q);
        finish_failed(rv, {reply_code::timeout, -1, not_arrived_text(rv.what, arrival.first.timeout_ms, missing, p), {}});
        break;
      }
    }
  }

  // ---- key-value store -----------------------------------------------------------------------

  void on_kv_set(int process, std::uint64_t req, const std::string& key, const std::string& value) {
    if (!from_member(process))
      return;
    store[key] = value;
    reply(process, req, ok());
    auto it = store_waiters.find(key);
    if (it == store_waiters.end())
      return;
    for (auto& w : it->second)
      reply(w, ok(value));
    store_waiters.erase(it);
  }

  void on_kv_get(int process, std::uint64_t req, const std::string& key, std::int64_t timeout_ms) {
    if (!from_member(process) || timeout_ms < 0)
      return;
    if (auto it = store.find(key); it != store.end()) {
      reply(process, req, ok(it->second));
      return;
    }
    store_waiters[key].push_back({process, req, clock::now() + std::chrono::milliseconds(timeout_ms), timeout_ms});
  }

  void check_store_deadlines(clock::time_point now) {
    for (auto it = store_waiters.begin(); it != store_waiters.end();) {
      auto& list = it->second;
      for (auto w = list.begin(); w != list.end();) {
        if (now >= w->deadline) {
          reply(*w, {reply_code::timeout, -1,
                     "Key '" + it->first + "' was not set within " + std::to_string(w->timeout_ms) + " ms", {}});
          w = list.erase(w);
        } else {
          ++w;
        }
      }
      it = list.empty() ? store_waiters.erase(it) : std::next(it);
    }
  }

  // ---- heartbeats ----------------------------------------------------------------------------

  void on_heartbeat(int process) {
    // A member that left still waits for the others: its heartbeats are echoed so that it does not
    // take the coordinator for lost while it waits.
    if (process >= 0 && process < config.process_count) {
      // A process declared failed that speaks again (it was stopped and resumed) is told it is out.
      auto& m = members[static_cast<std::size_t>(process)];
      if (m.status == member_status::failed && m.client
          && self->current_sender() == caf::actor_cast<caf::strong_actor_ptr>(m.client)) {
        self->send(m.client, failed_atom::value, encode(std::vector<declared_failure>{{process, failure_notice(process)}}));
        return;
      }
    }
    if (!from_member(process, /*or_left=*/true))
      return;
    members[static_cast<std::size_t>(process)].last_seen = clock::now();
    self->send(members[static_cast<std::size_t>(process)].client, heartbeat_atom::value);
  }

  void check_heartbeats(clock::time_point now) {
    if (config.heartbeat_timeout.count() <= 0)
      return;
    for (int p = 0; p < config.process_count; ++p) {
      auto& m = members[static_cast<std::size_t>(p)];
      if (m.status == member_status::joined && now - m.last_seen > config.heartbeat_timeout)
        declare_failed(p, "it sent no heartbeat for " + millis(config.heartbeat_timeout.count())
                              + " (the heartbeat timeout): it is stopped, hung or cut off");
    }
  }

  void on_down(const caf::down_msg& msg) {
    for (int p = 0; p < config.process_count; ++p) {
      auto& m = members[static_cast<std::size_t>(p)];
      if (m.client && m.client.address() == msg.source) {
        if (m.status == member_status::joined)
          declare_failed(p, "its connection to the coordinator was lost (the process died or closed it)");
        m.client = nullptr;
      }
    }
  }

  // ---- leaving -------------------------------------------------------------------------------

  void on_leave(int process, std::uint64_t req) {
    if (!from_member(process))
      return;
    members[static_cast<std::size_t>(process)].status = member_status::left;
    leave_waiters.push_back({process, req, {}, 0});
    fail_rendezvous_with(process);
    maybe_finish_leaving();
  }

  /// Once every process has left or failed, every process that asked to leave may go.
  void maybe_finish_leaving() {
    bool all_done = std::all_of(members.begin(), members.end(), [](auto& m) {
      return m.status == member_status::left || m.status == member_status::failed;
    });
    if (!all_done)
      return;
    for (auto& w : leave_waiters) {
      auto& m = members[static_cast<std::size_t>(w.process)];
      if (m.client)
        self->send(m.client, reply_atom::value, w.req, encode(ok()));
    }
    leave_waiters.clear();
  }

  void on_tick() {
    auto now = clock::now();
    check_join_deadline(now);
    check_rendezvous_deadlines(now);
    check_store_deadlines(now);
    if (formed)
      check_heartbeats(now);
    self->delayed_send(self, config.tick, tick_atom::value);
  }
};

using supervisor_actor = caf::stateful_actor<supervisor_state>;

/// Runs a handler; a malformed message or any error in it is logged and dropped, so the supervisor
/// keeps serving.
template <class F>
void guarded(const char* what, F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    log(log_level::warning, "supervisor: dropped a {} message: {}", what, e.what());
  }
}

caf::behavior supervisor_behavior(supervisor_actor* self, supervisor_config config) {
  auto& st = self->state;
  st.self = self;
  st.config = std::move(config);
  st.members.resize(static_cast<std::size_t>(st.config.process_count));
  st.join_deadline = clock::now() + st.config.join_timeout;
  self->set_default_handler(caf::drop);
  self->set_down_handler([self](caf::down_msg& msg) { guarded("down", [&] { self->state.on_down(msg); }); });
  self->send(self, tick_atom::value);
  return {
    [self](join_atom, const std::string& bytes) { guarded("join", [&] { self->state.on_join(bytes); }); },
    [self](heartbeat_atom, std::int32_t p) { guarded("heartbeat", [&] { self->state.on_heartbeat(p); }); },
    [self](barrier_atom, std::int32_t p, std::uint64_t req, const std::string& name, std::int64_t timeout_ms) {
      guarded("barrier", [&] { self->state.on_barrier(p, req, name, timeout_ms); });
    },
    [self](kv_set_atom, std::int32_t p, std::uint64_t req, const std::string& key, const std::string& value) {
      guarded("kv_set", [&] { self->state.on_kv_set(p, req, key, value); });
    },
    [self](kv_get_atom, std::int32_t p, std::uint64_t req, const std::string& key, std::int64_t timeout_ms) {
      guarded("kv_get", [&] { self->state.on_kv_get(p, req, key, timeout_ms); });
    },
    [self](collective_atom, std::int32_t p, std::uint64_t req, const std::string& bytes) {
      guarded("collective", [&] { self->state.on_collective(p, req, bytes); });
    },
    [self](call_server_atom, std::int32_t p, caf::actor server) {
      guarded("call server", [&] {
        auto& st = self->state;
        if (!st.from_member(p) || st.formed || !server) {
          log(log_level::warning, "supervisor: refused a call server from a sender that is not process {}'s client", p);
          return;
        }
        st.members[static_cast<std::size_t>(p)].call_server = std::move(server);
        log(log_level::info, "supervisor: process {} registered its call server", p);
        st.maybe_form();
      });
    },
    [self](leave_atom, std::int32_t p, std::uint64_t req) { guarded("leave", [&] { self->state.on_leave(p, req); }); },
    [self](tick_atom) { guarded("tick", [&] { self->state.on_tick(); }); },
    [self](flush_failures_atom) {
      if (self->current_sender() == caf::actor_cast<caf::strong_actor_ptr>(self))
        guarded("failures", [&] { self->state.flush_failures(); });
    },
    // From anyone who reaches the coordinator (`actormesh info --watch`): every process's counters.
    [self](stats::stats_request_atom, std::int64_t timeout_ms) {
      std::vector<std::pair<int, caf::actor>> clients;
      for (std::size_t p = 0; p < self->state.members.size(); ++p) {
        auto& m = self->state.members[p];
        clients.emplace_back(static_cast<int>(p), m.status == member_status::joined ? m.client : caf::actor{});
      }
      auto timeout = std::chrono::milliseconds(std::clamp<std::int64_t>(timeout_ms, 1, 60000));
      return stats::gather_stats(self, std::move(clients), timeout);
    },
  };
}

} // namespace

caf::actor spawn_supervisor(caf::actor_system& system, supervisor_config config) {
  if (config.process_count < 1 || config.process_count > max_cluster_processes)
    throw value_error("a cluster has 1 to " + std::to_string(max_cluster_processes) + " processes, not "
                      + std::to_string(config.process_count));
  return system.spawn(supervisor_behavior, std::move(config));
}

} // namespace am::detail
