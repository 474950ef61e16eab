// UCX's point-to-point layer measured on its own, the peer that the collectives' shared-memory path
// (devices/collectives/shm_mesh.hpp) is chosen by (issue 24, item 2).
//
//   ucx_peer [--bytes B] [--rounds R] [--warmup W] [--transports sm|tcp] [--block]
//       A ping-pong of B-byte tagged messages between two processes of this machine (the program
//       forks; the worker addresses cross a socketpair), as the library's mesh does it: UCX's tag
//       API, the waiting thread progressing the worker. --transports picks UCX's shared memory
//       (`sm`, the library's choice) or its TCP transport over loopback (`tcp`, to compare with
//       Gloo's TCP pairs and bench/tcp_peer); --block sleeps on UCX's event descriptor between
//       messages after a short spin, as the library does, instead of spinning throughout.
//       Prints the median round trip and the rate of one direction.
//
// Every process ends by itself (an alarm bounds each).
#include "bench_flags.hpp"
#include "bench_report.hpp"

#include <ucp/api/ucp.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

void check(ucs_status_t status, const char* what) {
  if (status != UCS_OK)
    throw std::runtime_error(std::string(what) + ": " + ucs_status_string(status));
}

void read_exactly(int fd, void* data, std::size_t n) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t got = ::read(fd, p, n);
    if (got <= 0)
      throw std::runtime_error("ucx_peer: the other process went away");
    p += got;
    n -= static_cast<std::size_t>(got);
  }
}

struct endpoint {
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  ucp_ep_h ep = nullptr;
  int event_fd = -1;
  bool block = false;

  void wait(void* request) {
    if (request == nullptr)
      return;
    if (UCS_PTR_IS_ERR(request))
      check(UCS_PTR_STATUS(request), "ucx_peer: request");
    int idle = 0;
    while (ucp_request_check_status(request) == UCS_INPROGRESS) {
      if (ucp_worker_progress(worker) != 0) {
        idle = 0;
        continue;
      }
      if (block && ++idle > 64) {
        idle = 0;
        if (ucp_worker_arm(worker) == UCS_OK) {
          pollfd fd{event_fd, POLLIN, 0};
          ::poll(&fd, 1, 100);
        }
      }
    }
    ucp_request_free(request);
  }
};

int run(int argc, char** argv) {
  am::bench::flags f(argc, argv, "UCX tagged ping-pong between two processes of this machine");
  const long long bytes = f.integer("--bytes", 256, "message size in bytes");
  const long long rounds = f.integer("--rounds", 20000, "timed round trips");
  const long long warmup = f.integer("--warmup", 1000, "untimed round trips first");
  const std::string transports = f.text("--transports", "sm", "UCX transports: sm (shared memory), mm (shared memory without cross-memory attach) or tcp");
  const bool block = f.present("--block", "sleep on UCX's event descriptor after a short spin");
  f.finish();
  if (bytes < 1 || rounds < 1 || warmup < 0 || (transports != "sm" && transports != "mm" && transports != "tcp"))
    throw std::invalid_argument("ucx_peer: --bytes and --rounds are positive, --transports is sm or tcp");
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0)
    throw std::runtime_error("ucx_peer: socketpair");
  const pid_t child = ::fork();
  const bool first = child != 0;
  const int fd = pair[first ? 0 : 1];
  ::alarm(300);

  endpoint e;
  e.block = block;
  ucp_config_t* config = nullptr;
  check(ucp_config_read(nullptr, nullptr, &config), "ucp_config_read");
  check(ucp_config_modify(config, "TLS", transports == "sm" ? "sm" : "tcp"), "ucp_config_modify");
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
  check(ucp_init(&params, config, &e.context), "ucp_init");
  ucp_config_release(config);
  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
  check(ucp_worker_create(e.context, &worker_params, &e.worker), "ucp_worker_create");
  check(ucp_worker_get_efd(e.worker, &e.event_fd), "ucp_worker_get_efd");
  ucp_address_t* own = nullptr;
  std::size_t own_length = 0;
  check(ucp_worker_get_address(e.worker, &own, &own_length), "ucp_worker_get_address");
  if (::write(fd, &own_length, sizeof own_length) != sizeof own_length
      || ::write(fd, own, own_length) != static_cast<ssize_t>(own_length))
    throw std::runtime_error("ucx_peer: could not pass the address");
  std::size_t peer_length = 0;
  read_exactly(fd, &peer_length, sizeof peer_length);
  std::vector<char> peer(peer_length);
  read_exactly(fd, peer.data(), peer_length);
  ucp_ep_params_t ep_params{};
  ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  ep_params.address = reinterpret_cast<const ucp_address_t*>(peer.data());
  check(ucp_ep_create(e.worker, &ep_params, &e.ep), "ucp_ep_create");

  std::vector<char> out(static_cast<std::size_t>(bytes), 1), in(static_cast<std::size_t>(bytes));
  ucp_request_param_t send_param{}, recv_param{};
  auto ping = [&] { e.wait(ucp_tag_send_nbx(e.ep, out.data(), out.size(), 1, &send_param)); };
  auto pong = [&] { e.wait(ucp_tag_recv_nbx(e.worker, in.data(), in.size(), 1, ~ucp_tag_t{0}, &recv_param)); };
  std::vector<double> seconds;
  for (long long k = 0; k < warmup + rounds; ++k) {
    const auto start = clock_type::now();
    if (first) {
      ping();
      pong();
    } else {
      pong();
      ping();
    }
    if (k >= warmup)
      seconds.push_back(std::chrono::duration<double>(clock_type::now() - start).count());
  }
  char done = 'q';
  if (::write(fd, &done, 1) != 1)
    throw std::runtime_error("ucx_peer: the other process went away");
  read_exactly(fd, &done, 1);
  if (!first)
    ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  const double median = am::bench::percentile(seconds, 0.5);
  std::printf("UCX %s%s, %lld bytes, %lld round trips: median %.2f us, %.3f GB/s one way\n", transports.c_str(),
              block ? " (spin, then sleep)" : " (spin)", bytes, rounds, median * 1e6, 2.0 * bytes / median / 1e9);
  std::printf("RESULT ucx_roundtrip_us %.3f\n", median * 1e6);
  std::printf("RESULT ucx_gbs %.4f\n", 2.0 * bytes / median / 1e9);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) { return am::bench::guarded_main("ucx_peer", run, argc, argv); }
