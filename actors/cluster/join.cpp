#include "actors/cluster/join.hpp"

#include "actormesh/build_config.hpp"
#include "actors/cluster/supervisor.hpp"
#include "actors/detail/log.hpp"
#include "actors/errors.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <mutex>
#include <thread>
#include <unistd.h>

namespace am::detail {

namespace {

std::mutex version_mutex;
std::string version_override;

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0)
    return "unknown";
  return buf;
}

std::string endpoint_text(const join_settings& s) {
  return s.coordinator_host + ":" + std::to_string(s.coordinator_port);
}

/// Publishes the supervisor on the coordinator address.
void publish_supervisor(caf::actor_system& system, const caf::actor& supervisor, const join_settings& s) {
  auto* in = s.listen_address.empty() ? nullptr : s.listen_address.c_str();
  auto published = s.tls ? caf::openssl::publish(supervisor, s.coordinator_port, in, true)
                         : system.middleman().publish(supervisor, s.coordinator_port, in, true);
  if (!published)
    throw runtime_error("The coordinator cannot listen on " + s.listen_address + ":"
                        + std::to_string(s.coordinator_port) + ": " + system.render(published.error()));
  log(log_level::info, "cluster: supervisor listening on {}:{}{}", s.listen_address, *published,
      s.tls ? " (mutual TLS)" : "");
}

/// Connects to the supervisor, retrying while nothing listens yet, until `deadline`. Each attempt
/// is bounded too: a coordinator that accepts but never answers (stopped) cannot hold the join.
caf::actor connect_supervisor(caf::actor_system& system, const join_settings& s,
                              std::chrono::steady_clock::time_point deadline) {
  auto manager = s.tls ? caf::actor_cast<caf::actor>(system.openssl_manager().actor_handle())
                       : caf::actor_cast<caf::actor>(system.middleman().actor_handle());
  std::string last_error = "no attempt made";
  caf::scoped_actor self{system};
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      break;
    caf::actor found;
    self->request(manager, left, caf::connect_atom::value, s.coordinator_host, s.coordinator_port)
      .receive(
        [&](const caf::node_id&, const caf::strong_actor_ptr& ptr, const std::set<std::string>&) {
          found = caf::actor_cast<caf::actor>(ptr);
          if (!found)
            last_error = "nothing is published at that port";
        },
        [&](const caf::error& err) { last_error = system.render(err); });
    if (found)
      return found;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw timeout_error("Process " + std::to_string(s.process) + " could not reach the coordinator at "
                      + endpoint_text(s) + " within " + std::to_string(s.join_timeout.count())
                      + " ms (the join timeout): " + last_error);
}

} // namespace

std::string announced_version() {
  std::lock_guard<std::mutex> guard(version_mutex);
  return version_override.empty() ? std::string(build::version) : version_override;
}

void set_announced_version_for_testing(std::string version) {
  std::lock_guard<std::mutex> guard(version_mutex);
  version_override = std::move(version);
}

void configure_cluster_modules(caf::actor_system_config& cfg, const join_settings& s,
                               const std::string& tls_certificate, const std::string& tls_key,
                               const std::string& tls_ca) {
  if (!s.networked)
    return;
  cfg.load<caf::io::middleman>();
  // Connections only where we make them; one multiplexer thread (measured: lowest round trip).
  cfg.set("middleman.enable-automatic-connections", false);
  cfg.set("middleman.workers", static_cast<size_t>(0));
  if (s.tls) {
    cfg.load<caf::openssl::manager>();
    cfg.set("openssl.certificate", tls_certificate);
    cfg.set("openssl.key", tls_key);
    cfg.set("openssl.cafile", tls_ca);
  }
}

cluster_membership join_cluster(caf::actor_system& system, const join_settings& s) {
  cluster_membership m;
  std::string coordinator = s.networked ? endpoint_text(s) : "this process (local mode)";
  auto stop_spawned = [&] {
    if (m.client)
      caf::anon_send_exit(m.client->actor(), caf::exit_reason::user_shutdown);
    if (m.supervisor)
      caf::anon_send_exit(m.supervisor, caf::exit_reason::user_shutdown);
  };
  try {
    auto deadline = std::chrono::steady_clock::now() + s.join_timeout;
    caf::actor supervisor;
    if (s.process == 0) {
      supervisor_config sc;
      sc.process_count = s.process_count;
      sc.version = announced_version();
      sc.coordinator = coordinator;
      sc.join_timeout = s.join_timeout;
      sc.heartbeat_timeout = s.networked ? s.heartbeat_timeout : std::chrono::milliseconds(0);
      m.supervisor = spawn_supervisor(system, sc);
      if (s.networked)
        publish_supervisor(system, m.supervisor, s);
      supervisor = m.supervisor;
    } else {
      supervisor = connect_supervisor(system, s, deadline);
    }
    join_request req;
    req.version = announced_version();
    req.process = s.process;
    req.process_count = s.process_count;
    req.host = host_name();
    req.devices = s.local_devices;
    client_config cc;
    cc.coordinator = coordinator;
    cc.heartbeat_interval = s.networked ? s.heartbeat_interval : std::chrono::milliseconds(0);
    cc.heartbeat_timeout = s.heartbeat_timeout;
    cc.default_timeout = s.collective_timeout;
    m.client = std::make_unique<cluster_client>(system, supervisor, std::move(req), cc);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    m.client->wait_joined(std::max(left, std::chrono::milliseconds(0)));
  } catch (...) {
    stop_spawned();
    throw;
  }
  return m;
}

} // namespace am::detail
