#include "devices/metrics_endpoint.hpp"

#include "cluster/listen_socket.hpp"
#include "devices/runtime_context.hpp"
#include "devices/stats_snapshot.hpp"

#include "actormesh/actors/errors.hpp"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <microhttpd.h>
#include <unistd.h>

#include <cstring>


#include <sstream>
#include <utility>
#include <vector>

namespace am::detail {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using labels = std::vector<ClientMetric::Label>;

/// Seconds a connection may stay idle (a client that connects and says nothing is closed then).
constexpr unsigned idle_timeout_seconds = 5;
/// Connections served at once; more are refused until one ends.
constexpr unsigned max_connections = 32;
/// Bytes one connection may hold for its request: a larger request line or headers are refused.
constexpr std::size_t connection_memory = 32 * 1024;
/// Prometheus's text exposition format.
constexpr const char* text_format = "text/plain; version=0.0.4; charset=utf-8";

/// Families of one snapshot, built one sample at a time.
class families {
public:
  /// Adds a sample to the family `name` (created with `help` and `type` on first use).
  void add(const std::string& name, const std::string& help, MetricType type, labels label, double value) {
    auto& family = family_named(name, help, type);
    ClientMetric m;
    m.label = std::move(label);
    if (type == MetricType::Counter)
      m.counter.value = value;
    else
      m.gauge.value = value;
    family.metric.push_back(std::move(m));
  }

  std::vector<MetricFamily> take() { return std::move(families_); }

private:
  MetricFamily& family_named(const std::string& name, const std::string& help, MetricType type) {
    for (auto& f : families_)
      if (f.name == name)
        return f;
    families_.push_back(MetricFamily{name, help, type, {}});
    return families_.back();
  }

  std::vector<MetricFamily> families_;
};

/// The families of `rt`'s counters now (names and units as Prometheus's conventions ask: a
/// `_total` suffix on counters, bytes and seconds as base units, the process as a label).
std::vector<MetricFamily> collect_counters(const runtime_context& rt) {
  const auto counters = read_runtime_counters(rt);
  const auto& s = counters.snapshot;
  const ClientMetric::Label process{"process", std::to_string(s.process_index)};
  families f;
  const auto counter = MetricType::Counter;
  const auto gauge = MetricType::Gauge;
  f.add("actormesh_uptime_seconds", "Seconds since this process's runtime started its devices", gauge, {process},
        s.uptime_seconds);
  for (auto& d : s.devices) {
    const labels l{process, {"device", d.device}, {"device_id", std::to_string(d.device_id)}};
    f.add("actormesh_device_calls_queued_total", "Calls queued to the device actor (every caller's lane)", counter, l,
          static_cast<double>(d.calls_queued));
    f.add("actormesh_device_calls_done_total", "Calls the device actor has run or failed", counter, l,
          static_cast<double>(d.calls_done));
    f.add("actormesh_device_queue_depth", "Calls queued to the device and not yet run", gauge, l,
          static_cast<double>(d.queue_depth));
    if (!d.has_memory)
      continue;
    f.add("actormesh_device_memory_in_use_bytes", "Bytes of live buffers on the device", gauge, l,
          static_cast<double>(d.memory.bytes_in_use));
    f.add("actormesh_device_memory_peak_bytes", "The most bytes of live buffers since the device started", gauge, l,
          static_cast<double>(d.memory.peak_bytes_in_use));
    f.add("actormesh_device_memory_limit_bytes", "The device's memory limit (0: none)", gauge, l,
          static_cast<double>(d.memory.bytes_limit));
    f.add("actormesh_device_memory_reserved_bytes", "Bytes of freed blocks the device's pool keeps for reuse", gauge,
          l, static_cast<double>(d.memory.bytes_reserved));
    f.add("actormesh_device_allocations_total", "Buffers allocated on the device (pool hits included)", counter, l,
          static_cast<double>(d.memory.num_allocs));
  }
  for (auto& lane : s.lanes) {
    const labels l{process, {"caller", std::to_string(lane.caller)}};
    f.add("actormesh_lane_tasks_queued_total", "Tasks sent to the host lane of one caller", counter, l,
          static_cast<double>(lane.tasks_queued));
    f.add("actormesh_lane_tasks_done_total", "Tasks the host lane has run", counter, l,
          static_cast<double>(lane.tasks_done));
    f.add("actormesh_lane_queue_depth", "Tasks queued to the host lane and not yet done", gauge, l,
          static_cast<double>(lane.queue_depth));
    f.add("actormesh_lane_running", "1 while the host lane runs a task", gauge, l, lane.running ? 1.0 : 0.0);
  }
  f.add("actormesh_transfer_in_flight_bytes", "Payload bytes of shard transfers being sent or received", gauge,
        {process}, static_cast<double>(s.transfers.bytes_in_flight));
  f.add("actormesh_transfer_sent_bytes_total", "Payload bytes of shard transfers sent", counter, {process},
        static_cast<double>(s.transfers.bytes_sent));
  f.add("actormesh_transfer_received_bytes_total", "Payload bytes of shard transfers received", counter, {process},
        static_cast<double>(s.transfers.bytes_received));
  f.add("actormesh_transfers_total", "Shard transfers finished", counter, {process},
        static_cast<double>(s.transfers.transfers));
  return f.take();
}

/// A reply of `status` with `body`; MHD_NO when it cannot be queued (the connection is then closed).
MHD_Result reply(MHD_Connection* connection, unsigned status, const std::string& body, const char* type) {
  MHD_Response* response =
    MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr)
    return MHD_NO;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  const MHD_Result queued = MHD_queue_response(connection, status, response);
  MHD_destroy_response(response);
  return queued;
}

/// Answers each request: GET (or HEAD) /metrics with the counters, anything else with 404 or 405.
MHD_Result answer(void* cls, MHD_Connection* connection, const char* url, const char* method, const char*,
                  const char*, std::size_t* upload_size, void** request_state) {
  if (*request_state == nullptr) { // the headers are in: the first call of this request
    static int started;
    *request_state = &started;
    return MHD_YES;
  }
  if (*upload_size != 0) {
    *upload_size = 0; // a body, which no request here should have: read and dropped
    return MHD_YES;
  }
  const bool get = std::strcmp(method, MHD_HTTP_METHOD_GET) == 0 || std::strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
  if (std::strcmp(url, "/metrics") != 0)
    return reply(connection, MHD_HTTP_NOT_FOUND, "not found: the counters are at /metrics\n", "text/plain");
  if (!get)
    return reply(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET /metrics\n", "text/plain");
  try {
    return reply(connection, MHD_HTTP_OK, metrics_text(*static_cast<const runtime_context*>(cls)), text_format);
  } catch (const std::exception& e) {
    return reply(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, std::string("the counters could not be read: ") + e.what() + "\n",
                 "text/plain");
  }
}

/// `host` as it stands before ":port": an IPv6 address in brackets.
std::string bracketed(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

} // namespace

metrics_endpoint::metrics_endpoint(const runtime_context& rt, const std::string& host, int port)
    : host_(host), rt_(rt) {
  const std::string address = bracketed(host) + ":" + std::to_string(port);
  auto socket = listen_socket(host, static_cast<std::uint16_t>(port), 64, false);
  if (socket.fd < 0)
    throw value_error("metrics endpoint (AM_METRICS_PORT, --am-metrics-port): cannot listen on " + address + ": "
                      + socket.why);
  listen_fd_ = socket.fd;
  port_ = socket.port;
  // MHD_USE_ITC lets the destructor take the socket back (MHD_quiesce_daemon) before stopping.
  daemon_ = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC, 0, nullptr, nullptr, &answer,
                             const_cast<runtime_context*>(&rt_), MHD_OPTION_LISTEN_SOCKET, listen_fd_,
                             MHD_OPTION_CONNECTION_TIMEOUT, idle_timeout_seconds, MHD_OPTION_CONNECTION_LIMIT,
                             max_connections, MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory, MHD_OPTION_END);
  if (daemon_ == nullptr) {
    ::close(listen_fd_);
    throw value_error("metrics endpoint (AM_METRICS_PORT, --am-metrics-port): the HTTP server did not start on "
                      + address);
  }
}

metrics_endpoint::~metrics_endpoint() {
  // The socket is ours: taken back first so that MHD does not close it too, then closed once.
  const MHD_socket socket = MHD_quiesce_daemon(daemon_);
  MHD_stop_daemon(daemon_); // joins its thread: no scrape reads the runtime after this
  ::close(socket != MHD_INVALID_SOCKET ? socket : listen_fd_);
}

std::string metrics_endpoint::url() const {
  return "http://" + bracketed(host_) + ":" + std::to_string(port_) + "/metrics";
}

int metrics_port_of(int base, int process) {
  return base == 0 ? 0 : base + process;
}

std::string metrics_text(const runtime_context& rt) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, collect_counters(rt));
  return out.str();
}

} // namespace am::detail
