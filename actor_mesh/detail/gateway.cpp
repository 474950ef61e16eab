#include "actor_mesh/detail/gateway.hpp"

#include "actormesh/actor_mesh/actor_errors.hpp"
#include "actor_mesh/detail/mesh_serving.hpp"
#include "actors/cluster_services.hpp"
#include "actors/detail/log.hpp"
#include "devices/detail/actor_links.hpp"
#include "devices/detail/actor_system_of.hpp"
#include "devices/detail/urgent_exit.hpp"
#include "actormesh/devices/options.hpp"
#include "devices/runtime_context.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/system_messages.hpp>

#include <map>
#include <optional>
#include <mutex>
#include <set>
#include <vector>

namespace am::detail {

namespace {

using acall_atom = caf::atom_constant<caf::atom("am_acall")>;
using aansw_atom = caf::atom_constant<caf::atom("am_aansw")>;
using awatch_atom = caf::atom_constant<caf::atom("am_awatch")>;
using atick_atom = caf::atom_constant<caf::atom("am_atick")>;

/// How often the gateway asks the cluster which processes failed.
constexpr std::chrono::milliseconds failure_poll{100};

/// How long a first call to a process may take to find and reach its gateway.
constexpr std::chrono::seconds connect_timeout{30};

std::string gateway_key(int process) { return "am/actors/gateway/" + std::to_string(process); }

/// The error of a call to `who`, whose process failed as `notice` (which names the process) says.
std::exception_ptr failure_of_process(const std::string& who, const std::string& notice, int rank) {
  return std::make_exception_ptr(actor_failure_error(who + " failed: " + notice, rank));
}

} // namespace

class actor_gateway {
public:
  explicit actor_gateway(runtime_context& context) : context_(context), processes_(context.cluster().process_count()) {
    peers_.resize(static_cast<std::size_t>(processes_));
    failed_.resize(static_cast<std::size_t>(processes_));
  }

  ~actor_gateway() {
    send_urgent_exit(self_);
    std::map<std::uint64_t, pending_call> left;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      left.swap(pending_);
    }
    for (auto& [id, call] : left)
      call.answer(std::make_exception_ptr(runtime_error("The actormesh runtime has stopped: the call to " + call.who
                                                        + " got no answer")),
                  {});
  }

  actor_gateway(const actor_gateway&) = delete;
  actor_gateway& operator=(const actor_gateway&) = delete;

  /// Spawns the gateway actor, publishes it and announces its address.
  void start(std::weak_ptr<actor_gateway> self);

  void register_mesh(const std::string& key, std::weak_ptr<mesh_core> core) {
    std::lock_guard<std::mutex> guard(mutex_);
    meshes_[key] = std::move(core);
  }

  /// Connects to the gateways of processes 1 to this one's index - 1 (once): so that between two
  /// processes other than the coordinator the higher one opens the connection, and two calls
  /// crossing each other never open two at once (CAF then closes both, failing the calls on
  /// them; seen with TLS, whose handshake widens the window). Process 0's connection is the
  /// cluster's own.
  void connect_lower_peers() {
    std::lock_guard<std::mutex> once(lower_peers_mutex_);
    if (lower_peers_connected_)
      return;
    for (int p = 1; p < context_.process_index(); ++p)
      peer_of(p);
    lower_peers_connected_ = true;
  }

  /// Connects to process `p`'s gateway now, unless connected already.
  void connect_to(int p) { peer_of(p); }

  void unregister_mesh(const std::string& key) {
    std::lock_guard<std::mutex> guard(mutex_);
    meshes_.erase(key);
  }

  void send_call(int process, actor_call call, const std::string& who, int rank, answer_callback answer) {
    std::string notice;
    if (process_failed(process, &notice)) {
      if (answer)
        answer(failure_of_process(who, notice, rank), {});
      return;
    }
    caf::actor peer;
    try {
      peer = peer_of(process);
    } catch (...) {
      if (answer)
        answer(process_failed(process, &notice)
                 ? failure_of_process(who, notice, rank)
                 : std::make_exception_ptr(actor_failure_error(
                     who + " cannot be reached: " + describe_exception(std::current_exception()), rank)),
               {});
      return;
    }
    if (answer) {
      std::lock_guard<std::mutex> guard(mutex_);
      call.request = ++last_request_;
      pending_.emplace(call.request, pending_call{process, rank, who, std::move(answer)});
    } else {
      call.request = 0;
    }
    caf::send_as(self_, peer, acall_atom::value, encode_call(call));
  }

  bool process_failed(int p, std::string* notice) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (p >= 0 && p < processes_ && failed_[static_cast<std::size_t>(p)]) {
        if (notice)
          *notice = *failed_[static_cast<std::size_t>(p)];
        return true;
      }
    }
    auto why = context_.cluster().failure_of(p);
    if (!why)
      return false;
    if (notice)
      *notice = *why;
    return true;
  }

  /// A call from another process's gateway `sender`: served by the mesh it names, answered there.
  void on_call(const caf::actor& sender, const std::string& bytes) {
    actor_call call;
    try {
      call = decode_call(bytes);
    } catch (const std::exception& e) {
      log(log_level::warning, "actor gateway: dropped a malformed call: {}", e.what());
      return;
    }
    auto gateway = self_;
    auto request = call.request;
    auto reply = [gateway, sender, request](const actor_answer& answer) {
      if (request != 0)
        caf::send_as(gateway, sender, aansw_atom::value, encode_answer(answer));
    };
    std::shared_ptr<mesh_core> core;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      auto it = meshes_.find(call.mesh);
      if (it != meshes_.end())
        core = it->second.lock();
    }
    if (!core) {
      reply(error_answer(request, std::make_exception_ptr(value_error(
                                    "process " + std::to_string(context_.process_index()) + " has no actor mesh '"
                                    + call.mesh + "' (never spawned there, or stopped)"))));
      return;
    }
    serve_remote_call(*core, std::move(call), std::move(reply));
  }

  /// An answer from another process's gateway.
  void on_answer(const std::string& bytes) {
    actor_answer answer;
    try {
      answer = decode_answer(bytes);
    } catch (const std::exception& e) {
      log(log_level::warning, "actor gateway: dropped a malformed answer: {}", e.what());
      return;
    }
    pending_call call;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      auto it = pending_.find(answer.request);
      if (it == pending_.end())
        return; // failed already (its process was declared failed), or never asked
      call = std::move(it->second);
      pending_.erase(it);
    }
    if (answer.ok)
      call.answer(nullptr, answer.value);
    else
      call.answer(rebuild_error(answer, call.rank), {});
  }

  /// Process `p` failed (or its gateway's connection closed): every call waiting on it fails, and
  /// every mesh with actors there is told once.
  void on_process_failed(int p, const std::string& notice) {
    std::vector<pending_call> failing;
    std::vector<std::shared_ptr<mesh_core>> meshes;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (p < 0 || p >= processes_ || failed_[static_cast<std::size_t>(p)])
        return;
      failed_[static_cast<std::size_t>(p)] = notice;
      for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->second.process == p) {
          failing.push_back(std::move(it->second));
          it = pending_.erase(it);
        } else {
          ++it;
        }
      }
      for (auto& [key, weak] : meshes_)
        if (auto core = weak.lock())
          meshes.push_back(core);
    }
    for (auto& call : failing)
      call.answer(failure_of_process(call.who, notice, call.rank), {});
    for (auto& core : meshes)
      remote_process_failed(*core, p, notice);
  }

  /// Asks the cluster which processes failed (every failure_poll).
  void poll_failures() {
    for (int p = 0; p < processes_; ++p) {
      if (p == context_.process_index())
        continue;
      {
        std::lock_guard<std::mutex> guard(mutex_);
        if (failed_[static_cast<std::size_t>(p)])
          continue;
      }
      if (auto why = context_.cluster().failure_of(p))
        on_process_failed(p, *why);
    }
  }

  /// The process whose gateway is `peer`, or -1.
  int process_of(const caf::actor_addr& peer) {
    std::lock_guard<std::mutex> guard(peers_mutex_);
    for (std::size_t p = 0; p < peers_.size(); ++p)
      if (peers_[p] && peers_[p].address() == peer)
        return static_cast<int>(p);
    return -1;
  }

private:
  struct pending_call {
    int process = 0;
    int rank = 0;
    std::string who;
    answer_callback answer;
  };

  /// Process `p`'s gateway, connected on first use (its address from the cluster's store).
  caf::actor peer_of(int p) {
    if (p < 0 || p >= processes_)
      throw value_error("no process " + std::to_string(p) + " in a cluster of " + std::to_string(processes_));
    auto connected = [&]() -> caf::actor {
      std::lock_guard<std::mutex> guard(peers_mutex_);
      return peers_[static_cast<std::size_t>(p)];
    };
    if (auto peer = connected())
      return peer;
    std::lock_guard<std::mutex> serialize(connect_mutex_); // one connection per process
    if (auto peer = connected())
      return peer;
    auto deadline = std::chrono::steady_clock::now() + connect_timeout;
    auto address = context_.cluster().kv_get(gateway_key(p), std::chrono::duration_cast<std::chrono::milliseconds>(connect_timeout));
    // In attempts of a second, so that a process the cluster declares failed meanwhile (it died
    // before this process ever called it) ends the wait at once instead of at the deadline.
    caf::actor peer;
    while (!peer) {
      std::string notice;
      if (process_failed(p, &notice))
        throw process_failure_error(notice, p);
      auto now = std::chrono::steady_clock::now();
      try {
        peer = connect_published(context_, address, std::min(deadline, now + std::chrono::seconds(1)));
      } catch (const timeout_error&) {
        if (std::chrono::steady_clock::now() >= deadline)
          throw;
      }
    }
    caf::anon_send(self_, awatch_atom::value, peer);
    std::lock_guard<std::mutex> guard(peers_mutex_);
    peers_[static_cast<std::size_t>(p)] = peer;
    return peer;
  }

  runtime_context& context_;
  int processes_;
  caf::actor self_;
  published_actor published_; ///< the gateway's guarded port
  std::mutex mutex_;
  std::map<std::string, std::weak_ptr<mesh_core>> meshes_;
  std::map<std::uint64_t, pending_call> pending_;
  std::uint64_t last_request_ = 0;
  std::vector<std::optional<std::string>> failed_; ///< by process: its failure notice, once known
  std::mutex connect_mutex_;      ///< held while connecting to a process's gateway
  std::mutex lower_peers_mutex_;  ///< held by connect_lower_peers
  bool lower_peers_connected_ = false;
  std::mutex peers_mutex_;        ///< guards peers_ (never held while connecting)
  std::vector<caf::actor> peers_; ///< by process: its gateway, once connected
};

namespace {

struct gateway_state {
  std::weak_ptr<actor_gateway> gateway;
  static inline const char* name = "am.actor_gateway";
};

caf::behavior gateway_behavior(caf::stateful_actor<gateway_state>* self, std::weak_ptr<actor_gateway> gateway) {
  self->state.gateway = std::move(gateway);
  self->set_default_handler(caf::drop); // a message of another type from a peer: dropped, nothing else
  self->set_down_handler([self](caf::down_msg& down) {
    if (auto g = self->state.gateway.lock()) {
      int p = g->process_of(down.source);
      if (p >= 0)
        g->on_process_failed(p, "process " + std::to_string(p)
                                  + "'s actor gateway closed its connection (the process died or closed it)");
    }
  });
  self->delayed_send(self, failure_poll, atick_atom::value);
  return {
    [self](acall_atom, const std::string& bytes) {
      auto sender = caf::actor_cast<caf::actor>(self->current_sender());
      if (!sender)
        return; // anonymous: nobody to answer
      if (auto g = self->state.gateway.lock())
        g->on_call(sender, bytes);
    },
    [self](aansw_atom, const std::string& bytes) {
      if (auto g = self->state.gateway.lock())
        g->on_answer(bytes);
    },
    [self](awatch_atom, const caf::actor& peer) { self->monitor(peer); },
    [self](atick_atom) {
      if (auto g = self->state.gateway.lock())
        g->poll_failures();
      self->delayed_send(self, failure_poll, atick_atom::value);
    },
  };
}

const service_key<actor_gateway> gateway_key_{"actor gateway"};

} // namespace

void actor_gateway::start(std::weak_ptr<actor_gateway> self) {
  self_ = actor_system_of(context_).spawn(gateway_behavior, std::move(self));
  published_ = publish_actor(context_, self_);
  context_.cluster().kv_set(gateway_key(context_.process_index()), published_.address);
  log(log_level::info, "actor gateway of process {} listening on {}", context_.process_index(), published_.address);
}

std::shared_ptr<actor_gateway> gateway_of(runtime_context& context) {
  return context.service(gateway_key_, [&context] {
    auto gateway = std::make_shared<actor_gateway>(context);
    gateway->start(gateway);
    return gateway;
  });
}

void register_mesh(actor_gateway& gateway, const std::string& key, std::weak_ptr<mesh_core> core) {
  gateway.register_mesh(key, std::move(core));
}

void unregister_mesh(actor_gateway& gateway, const std::string& key) { gateway.unregister_mesh(key); }

void connect_lower_peers(actor_gateway& gateway) { gateway.connect_lower_peers(); }

void connect_to(actor_gateway& gateway, int process) { gateway.connect_to(process); }

void send_call(actor_gateway& gateway, int process, actor_call call, const std::string& who, int rank,
               answer_callback answer) {
  gateway.send_call(process, std::move(call), who, rank, std::move(answer));
}

} // namespace am::detail
