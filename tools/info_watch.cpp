#include "tools/info_watch.hpp"

#include "cluster/guard/guarded_connect.hpp"
#include "actormesh/actors/errors.hpp"
#include "devices/cluster_environment.hpp"
#include "observability/stats_wire.hpp"
#include "tools/terminal.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <ostream>
#include <thread>

namespace am::tools {

namespace {

using detail::stats::process_stats;

struct endpoint {
  std::string host;
  std::uint16_t port = 0;
};

endpoint parse_coordinator(const std::string& text) {
  auto colon = text.rfind(':');
  auto port = colon == std::string::npos ? std::nullopt : parse_port(std::string_view(text).substr(colon + 1));
  if (colon == 0 || !port)
    throw value_error("info --watch: the coordinator must be HOST:PORT (AM_COORDINATOR, --coordinator), not '" + text
                      + "'");
  auto host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return {host, static_cast<std::uint16_t>(*port)};
}

/// The supervisor published at `e`, reached through its guard, retrying while nothing listens yet,
/// until `timeout`.
caf::actor connect(caf::actor_system& system, const endpoint& e, const std::string& secret,
                   std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  detail::guard::connect_settings cs;
  cs.host = e.host;
  cs.port = e.port;
  cs.secret = secret;
  auto attempt = detail::guard::guarded_connect_until(system, cs, deadline);
  if (attempt.found)
    return attempt.found;
  const auto& last = attempt.error;
  throw runtime_error("info --watch: no cluster answers at " + e.host + ":" + std::to_string(e.port) + " within "
                      + std::to_string(timeout.count()) + " ms: " + last
                      + " (start the program under `actormesh launch --coordinator-port PORT`, or give the "
                        "AM_COORDINATOR of its process 0, and its AM_CLUSTER_TOKEN when it has one; a cluster "
                        "with mutual TLS is not reachable this way)");
}

std::string per_second(double rate) { return rate > 0 ? fmt::format("{:.1f}", rate) : "-"; }

/// Why a request to the supervisor failed, in words rather than CAF's rendering of the error
/// ("system_error(request_timeout)").
std::string failure_words(caf::actor_system& system, const caf::error& err, std::chrono::milliseconds timeout) {
  if (err == caf::sec::request_timeout)
    return "no answer within " + std::to_string(timeout.count()) + " ms";
  if (err == caf::sec::request_receiver_down || err == caf::exit_reason::remote_link_unreachable)
    return "the connection to process 0 was lost";
  return system.render(err);
}

} // namespace

std::string format_bytes(double bytes) {
  if (bytes < 1024)
    return fmt::format("{:.0f} B", bytes);
  if (bytes < 1024.0 * 1024)
    return fmt::format("{:.1f} KiB", bytes / 1024);
  if (bytes < 1024.0 * 1024 * 1024)
    return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024));
  return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024));
}

std::string render_cluster_stats(const std::string& coordinator, const std::vector<process_stats>& all, int refresh,
                                 int count) {
  std::string out = fmt::format("cluster at {}: {} process{} (refresh {}{})\n", coordinator, all.size(),
                                all.size() == 1 ? "" : "es", refresh, count > 0 ? fmt::format(" of {}", count) : "");
  for (auto& p : all) {
    if (!p.ok) {
      out += fmt::format("process {}: no counters: {}\n", p.process, p.error);
      continue;
    }
    auto& s = p.snapshot;
    out += fmt::format("process {}  up {:.1f} s  transfers: {} in flight, {} sent, {} received ({} done)\n", p.process,
                       s.uptime_seconds, format_bytes(static_cast<double>(s.transfers.bytes_in_flight)),
                       format_bytes(static_cast<double>(s.transfers.bytes_sent)),
                       format_bytes(static_cast<double>(s.transfers.bytes_received)), s.transfers.transfers);
    out += fmt::format("  {:<18} {:>10} {:>10} {:>7} {:>10} {:>12} {:>12}\n", "device", "queued", "done", "depth",
                       "calls/s", "memory", "peak");
    for (auto& d : s.devices)
      out += fmt::format("  {:<18} {:>10} {:>10} {:>7} {:>10} {:>12} {:>12}\n", d.device, d.calls_queued, d.calls_done,
                         d.queue_depth, per_second(d.calls_per_second),
                         d.has_memory ? format_bytes(static_cast<double>(d.memory.bytes_in_use)) : "n/a",
                         d.has_memory ? format_bytes(static_cast<double>(d.memory.peak_bytes_in_use)) : "n/a");
    for (auto& l : s.lanes)
      out += fmt::format("  {:<18} {:>10} {:>10} {:>7} {:>10} {}\n", fmt::format("lane of caller {}", l.caller), l.tasks_queued,
                         l.tasks_done, l.queue_depth, per_second(l.tasks_per_second), l.running ? "running" : "idle");
  }
  return out;
}

std::string render_cluster_stats_json(const std::string& coordinator, const std::vector<process_stats>& all,
                                      int refresh) {
  using json = nlohmann::json;
  json processes = json::array();
  for (auto& p : all) {
    json one = {{"process", p.process}, {"ok", p.ok}};
    if (!p.ok) {
      one["error"] = p.error;
      processes.push_back(std::move(one));
      continue;
    }
    auto& s = p.snapshot;
    one["uptime_seconds"] = s.uptime_seconds;
    one["interval_seconds"] = s.interval_seconds;
    json devices = json::array();
    for (auto& d : s.devices) {
      json device = {{"device_id", d.device_id},     {"device", d.device},
                     {"calls_queued", d.calls_queued}, {"calls_done", d.calls_done},
                     {"queue_depth", d.queue_depth},   {"calls_per_second", d.calls_per_second},
                     {"has_memory", d.has_memory}};
      if (d.has_memory)
        device["memory"] = {{"bytes_in_use", d.memory.bytes_in_use},
                            {"peak_bytes_in_use", d.memory.peak_bytes_in_use},
                            {"bytes_limit", d.memory.bytes_limit},
                            {"bytes_reserved", d.memory.bytes_reserved},
                            {"num_allocs", d.memory.num_allocs}};
      devices.push_back(std::move(device));
    }
    one["devices"] = std::move(devices);
    json lanes = json::array();
    for (auto& l : s.lanes)
      lanes.push_back({{"caller", l.caller},
                       {"tasks_queued", l.tasks_queued},
                       {"tasks_done", l.tasks_done},
                       {"queue_depth", l.queue_depth},
                       {"tasks_per_second", l.tasks_per_second},
                       {"running", l.running}});
    one["lanes"] = std::move(lanes);
    one["transfers"] = {{"bytes_in_flight", s.transfers.bytes_in_flight},
                        {"bytes_sent", s.transfers.bytes_sent},
                        {"bytes_received", s.transfers.bytes_received},
                        {"transfers", s.transfers.transfers}};
    processes.push_back(std::move(one));
  }
  json frame = {{"coordinator", coordinator}, {"refresh", refresh}, {"processes", std::move(processes)}};
  return frame.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string clip_frame(const std::string& frame, int rows) {
  const auto lines = static_cast<int>(std::count(frame.begin(), frame.end(), '\n'));
  if (rows < 2 || lines <= rows)
    return frame;
  std::size_t end = 0;
  for (int kept = 0; kept < rows - 1; ++kept)
    end = frame.find('\n', end) + 1;
  return frame.substr(0, end)
         + fmt::format("... {} more lines (a taller terminal shows them; --json gives everything)\n", lines - (rows - 1));
}

void watch_cluster(const watch_options& options, std::ostream& out, bool terminal) {
  auto e = parse_coordinator(options.coordinator);
  if (options.count < 0)
    throw value_error("info --watch: --count must be 0 or more, not " + std::to_string(options.count));
  if (!(options.interval_seconds >= 0.05 && options.interval_seconds <= 3600))
    throw value_error("info --watch: --interval must be 0.05 to 3600 seconds");
  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>();
  cfg.set("middleman.enable-automatic-connections", false);
  cfg.set("middleman.workers", static_cast<size_t>(0));
  cfg.set("scheduler.max-threads", static_cast<size_t>(2));
  cfg.set("logger.verbosity", caf::atom("quiet"));
  caf::actor_system system{cfg};
  auto supervisor = connect(system, e, options.secret, options.connect_timeout);
  caf::scoped_actor self{system};
  // The supervisor waits a little less for the processes than this side waits for it.
  auto gather = std::max(options.answer_timeout - std::chrono::milliseconds(500), std::chrono::milliseconds(100));
  std::size_t drawn_lines = 0;
  for (int refresh = 1; options.count == 0 || refresh <= options.count; ++refresh) {
    if (refresh > 1)
      std::this_thread::sleep_for(std::chrono::duration<double>(options.interval_seconds));
    std::string answer, failure;
    self->request(supervisor, options.answer_timeout, detail::stats::stats_request_atom::value,
                  static_cast<std::int64_t>(gather.count()))
      .receive([&](const std::string& bytes) { answer = bytes; },
               [&](const caf::error& err) { failure = failure_words(system, err, options.answer_timeout); });
    if (!failure.empty())
      throw runtime_error("info --watch: the cluster at " + options.coordinator + " stopped answering (" + failure
                          + ")");
    const auto all = detail::stats::decode_cluster_stats(answer);
    if (options.json) {
      out << render_cluster_stats_json(options.coordinator, all, refresh) << std::flush;
      continue;
    }
    auto frame = render_cluster_stats(options.coordinator, all, refresh, options.count);
    if (terminal)
      frame = clip_frame(frame, options.rows > 0 ? options.rows : terminal_rows(out));
    if (terminal && drawn_lines > 0)
      out << fmt::format("\x1b[{}F\x1b[J", drawn_lines); // back to the previous frame's first line, clear below
    else if (refresh > 1)
      out << '\n';
    out << frame << std::flush;
    drawn_lines = static_cast<std::size_t>(std::count(frame.begin(), frame.end(), '\n'));
  }
}

} // namespace am::tools
