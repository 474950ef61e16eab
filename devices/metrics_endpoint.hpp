/// The Prometheus endpoint of a runtime (--am-metrics-port, AM_METRICS_PORT): an HTTP server that
/// answers GET /metrics with this process's live counters (the figures of am::runtime_stats(), as
/// counters and gauges in Prometheus's text format, written by prometheus-cpp's serializer), served
/// by GNU libmicrohttpd on one polling thread of its own. It listens on loopback unless
/// AM_METRICS_HOST says otherwise. Internal: the runtime starts it once its devices are up and
/// stops it first when it stops. (prometheus-cpp's own exposer, civetweb, was tried first: its worker
/// threads crashed here on their first wait. Debian builds civetweb with 100 KiB thread stacks, and
/// this process's static TLS, OpenBLAS's 60 KiB and NCCL's 12 KiB among it, lives in them: the
/// likely cause.)
#pragma once

#include <string>

struct MHD_Daemon;

namespace am::detail {

class runtime_context;

/// A running endpoint. Not copyable; destroying it stops the server (after the scrape in progress,
/// if any, which only reads counters).
class metrics_endpoint {
public:
  /// Listens on `host`:`port` (port 0: a free one) and serves `rt`'s counters, which must outlive
  /// the endpoint. Throws am::value_error naming the address and why when it cannot listen.
  metrics_endpoint(const runtime_context& rt, const std::string& host, int port);
  ~metrics_endpoint();
  metrics_endpoint(const metrics_endpoint&) = delete;
  metrics_endpoint& operator=(const metrics_endpoint&) = delete;

  /// The port it listens on (the one picked, for port 0).
  int port() const noexcept { return port_; }
  /// Its address, "http://host:port/metrics".
  std::string url() const;

private:
  std::string host_;
  int port_ = 0;
  const runtime_context& rt_;
  int listen_fd_ = -1;
  MHD_Daemon* daemon_ = nullptr;
};

/// The port process `process` of a cluster listens on for `--am-metrics-port base`: base + process
/// (so that the processes of one machine do not collide), or 0 (a free one) when base is 0.
int metrics_port_of(int base, int process);

/// The text Prometheus reads for one snapshot of `rt`'s counters (what a scrape gets; tests read it directly).
std::string metrics_text(const runtime_context& rt);

} // namespace am::detail
