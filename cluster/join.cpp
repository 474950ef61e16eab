#include "cluster/join.hpp"

#include "actormesh/build_config.hpp"
#include "cluster/guard/guarded_connect.hpp"
#include "cluster/supervisor.hpp"
#include "actors/detail/log.hpp"
#include "actormesh/actors/errors.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/send.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace am::detail {

namespace {

/// How long a coordinator whose cluster was refused keeps answering late joiners.
constexpr std::chrono::milliseconds refusal_linger{1000};

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

/// Publishes the supervisor on the coordinator address, behind the guard (guard/guarded_listener.hpp).
/// Beyond loopback it needs the cluster's secret or TLS: otherwise anyone who reaches the port
/// could join.
std::unique_ptr<guard::guarded_listener> publish_supervisor(caf::actor_system& system, const caf::actor& supervisor,
                                                            const join_settings& s) {
  if (!guard::is_loopback(s.listen_address) && s.cluster_token.empty() && !s.tls)
    throw value_error("The coordinator will not listen on " + s.listen_address
                      + " (beyond loopback) without the cluster's secret or TLS: give every process the same "
                        "AM_CLUSTER_TOKEN or AM_CLUSTER_TOKEN_FILE (actormesh launch makes one), or mutual TLS "
                        "(AM_TLS_CERTIFICATE, AM_TLS_KEY, AM_TLS_CA)");
  guard::listener_settings ls;
  ls.address = s.listen_address;
  ls.port = s.coordinator_port;
  ls.secret = s.cluster_token;
  ls.tls = s.tls;
  ls.max_frame_bytes = s.max_frame_bytes;
  ls.max_connections = static_cast<std::size_t>(s.max_connections);
  auto listener = std::make_unique<guard::guarded_listener>(system, supervisor, ls);
  log(log_level::info, "cluster: supervisor listening on {}:{}{}{}", s.listen_address, listener->port(),
      s.tls ? " (mutual TLS)" : "", s.cluster_token.empty() ? "" : " (cluster secret)");
  return listener;
}

/// What a refused connection most likely means (CAF's error names no reason), or "".
std::string connect_hint(const join_settings& s, const std::string& error) {
  bool closed = error.find("disconnect_during_handshake") != std::string::npos;
  if (closed && s.tls)
    return " (the connection was closed during the handshake: with mutual TLS, the coordinator refused this "
           "process's certificate or this process refused the coordinator's, and both must be signed by the CA "
           "each side gives as AM_TLS_CA; or the coordinator may not use TLS)";
  if (closed)
    return " (the connection was closed during the handshake: the coordinator may require mutual TLS, "
           "AM_TLS_CERTIFICATE, AM_TLS_KEY and AM_TLS_CA)";
  if (s.tls && error == "system_error(cannot_connect_to_node)")
    return " (the TLS handshake failed: the coordinator may not use TLS)";
  return {};
}

/// Connects to the supervisor through the coordinator's guard, retrying while nothing listens yet,
/// until `deadline`. Each attempt is bounded too: a coordinator that accepts but never answers
/// (stopped) cannot hold the join. A refusal that retrying cannot change (the secret) ends at once.
caf::actor connect_supervisor(caf::actor_system& system, const join_settings& s,
                              std::chrono::steady_clock::time_point deadline) {
  guard::connect_settings cs;
  cs.host = s.coordinator_host;
  cs.port = s.coordinator_port;
  cs.secret = s.cluster_token;
  cs.tls = s.tls;
  cs.max_frame_bytes = s.max_frame_bytes;
  auto attempt = guard::guarded_connect_until(system, cs, deadline);
  if (attempt.found)
    return attempt.found;
  if (attempt.final)
    throw value_error("Process " + std::to_string(s.process) + " cannot join the cluster at " + endpoint_text(s)
                      + ": " + attempt.error);
  const auto& last_error = attempt.error;
  throw timeout_error("Process " + std::to_string(s.process) + " could not reach the coordinator at "
                      + endpoint_text(s) + " within " + std::to_string(s.join_timeout.count())
                      + " ms (the join timeout): " + last_error + connect_hint(s, last_error));
}

/// Refuses a TLS file that cannot be read or holds no PEM block of its kind: CAF's OpenSSL module
/// loads the files only when the first connection is made, and then throws from its multiplexer
/// thread ("cannot load certificate"), which aborts the process. Reads at most 1 MiB. An empty path
/// is left to CAF (the runtime's options give all three files or none).
void check_tls_file(const std::string& path, const char* what, const char* option, const char* marker) {
  if (path.empty())
    return;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw value_error(std::string("mutual TLS: the ") + what + " file '" + path + "' (" + option
                      + ") cannot be read: " + std::strerror(errno));
  std::string text(1 << 20, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.find(marker) == std::string::npos)
    throw value_error(std::string("mutual TLS: the ") + what + " file '" + path + "' (" + option
                      + ") holds no PEM " + what + " (no line with '" + marker + "')");
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
    check_tls_file(tls_certificate, "certificate", "AM_TLS_CERTIFICATE, --am-tls-certificate", "-----BEGIN CERTIFICATE-----");
    check_tls_file(tls_key, "private key", "AM_TLS_KEY, --am-tls-key", "PRIVATE KEY-----");
    check_tls_file(tls_ca, "CA certificate", "AM_TLS_CA, --am-tls-ca", "-----BEGIN CERTIFICATE-----");
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
        m.listener = publish_supervisor(system, m.supervisor, s);
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
    req.role = s.role;
    client_config cc;
    cc.call_server = s.call_server;
    cc.coordinator = coordinator;
    cc.heartbeat_interval = s.networked ? s.heartbeat_interval : std::chrono::milliseconds(0);
    cc.heartbeat_timeout = s.heartbeat_timeout;
    cc.default_timeout = s.collective_timeout;
    cc.secret = s.cluster_token;
    cc.answer_stats = s.answer_stats;
    m.client = std::make_unique<cluster_client>(system, supervisor, std::move(req), cc);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    m.client->wait_joined(std::max(left, std::chrono::milliseconds(0)));
  } catch (const value_error&) {
    // A refused join (another build, a bad index): the coordinator keeps answering a moment, so
    // that processes still connecting hear the reason rather than only that it went away.
    if (m.supervisor && s.networked)
      std::this_thread::sleep_for(refusal_linger);
    stop_spawned();
    throw;
  } catch (...) {
    stop_spawned();
    throw;
  }
  return m;
}

} // namespace am::detail
