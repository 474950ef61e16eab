// Plain loopback TCP peers of the cluster benchmarks.
//
//   tcp_peer [transfer] [--mib M] [--warmup W] [--rounds R]
//       The peer of the shard transfer benchmark: what moving M MiB (256 by default) from one
//       process to another costs over a plain TCP socket on 127.0.0.1, the floor that Gloo's TCP
//       pair (bench_cluster_transfer) is measured against. The program forks: the child connects
//       and writes, the parent listens and reads. For each round the reader sends one "go" byte and
//       times until the last byte has arrived in its buffer; the writer answers every "go" with one
//       write() of the whole buffer. Both buffers are allocated and touched once and reused (a
//       fresh page costs a page fault when first touched). Default socket options but TCP_NODELAY,
//       as Gloo's; reads go straight into the destination buffer, as Gloo's do.
//   tcp_peer barrier --processes N [--warmup W] [--rounds R]
//       Not a target's anchor but a measure of what would close the barrier gap: a dissemination
//       barrier (ceil(log2 N) rounds; in round k every process writes one byte to process
//       r + 2^k and reads one from r - 2^k, as MPI's barriers do) over a full mesh of blocking
//       loopback sockets, run by the calling thread itself: no thread handoff and no busy polling
//       (MPI_Barrier polls; this sleeps in read()). Process 0 times each barrier.
//
// Every process ends by itself (an alarm bounds each).
#include "bench_flags.hpp"
#include "bench_report.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using am::bench::percentile;

using clock_type = std::chrono::steady_clock;

[[noreturn]] void fail(const char* what) {
  std::perror(what);
  std::exit(2);
}

bool write_all(int fd, const std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    ssize_t k = ::write(fd, p, n);
    if (k <= 0)
      return false;
    p += k;
    n -= static_cast<std::size_t>(k);
  }
  return true;
}

bool read_all(int fd, std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    ssize_t k = ::read(fd, p, n);
    if (k <= 0)
      return false;
    p += k;
    n -= static_cast<std::size_t>(k);
  }
  return true;
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/// A listening socket on 127.0.0.1 with a kernel-chosen port.
int listen_loopback(sockaddr_in& addr) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  addr = sockaddr_in{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0)
    fail("tcp_peer: listen");
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return fd;
}

/// Process `me` of `n`: connects the full mesh (to every higher rank's listener, accepting every
/// lower one), then runs the barriers; returns the per-barrier times in us.
std::vector<double> dissemination(int me, int n, std::vector<int>& listeners, const std::vector<sockaddr_in>& addrs,
                                  long long warmup, long long rounds) {
  std::vector<int> peer(static_cast<std::size_t>(n), -1);
  for (int j = 0; j < n; ++j)
    if (j != me)
      ::close(listeners[static_cast<std::size_t>(j)]);
  for (int j = me + 1; j < n; ++j) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addrs[static_cast<std::size_t>(j)]), sizeof(sockaddr_in)) != 0)
      fail("tcp_peer: connect");
    auto id = static_cast<std::uint8_t>(me);
    if (!write_all(fd, &id, 1))
      fail("tcp_peer: hello");
    set_nodelay(fd);
    peer[static_cast<std::size_t>(j)] = fd;
  }
  for (int k = 0; k < me; ++k) {
    int fd = ::accept(listeners[static_cast<std::size_t>(me)], nullptr, nullptr);
    std::uint8_t id = 0;
    if (fd < 0 || !read_all(fd, &id, 1) || id >= me)
      fail("tcp_peer: accept");
    set_nodelay(fd);
    peer[id] = fd;
  }
  ::close(listeners[static_cast<std::size_t>(me)]);
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(rounds));
  for (long long k = 0; k < warmup + rounds; ++k) {
    auto start = clock_type::now();
    for (int d = 1; d < n; d *= 2) {
      std::uint8_t b = 1;
      if (!write_all(peer[static_cast<std::size_t>((me + d) % n)], &b, 1)
          || !read_all(peer[static_cast<std::size_t>((me - d + n) % n)], &b, 1))
        fail("tcp_peer: barrier");
    }
    if (k >= warmup)
      us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
  }
  for (int fd : peer)
    if (fd >= 0)
      ::close(fd);
  return us;
}

int barrier_main(int n, long long warmup, long long rounds) {
  std::vector<int> listeners(static_cast<std::size_t>(n));
  std::vector<sockaddr_in> addrs(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j)
    listeners[static_cast<std::size_t>(j)] = listen_loopback(addrs[static_cast<std::size_t>(j)]);
  std::vector<pid_t> children;
  for (int p = 1; p < n; ++p) {
    pid_t child = ::fork();
    if (child == 0) {
      ::alarm(120);
      dissemination(p, n, listeners, addrs, warmup, rounds);
      ::_exit(0);
    }
    children.push_back(child);
  }
  ::alarm(120);
  auto us = dissemination(0, n, listeners, addrs, warmup, rounds);
  int rc = 0;
  for (pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      rc = 1;
  }
  std::printf("dissemination barrier over blocking loopback TCP, %d processes, %lld rounds: median %.1f us, "
              "p10 %.1f, p90 %.1f\n",
              n, rounds, percentile(us, 0.5), percentile(us, 0.1), percentile(us, 0.9));
  std::printf("RESULT tcp_barrier_us %.2f\nRESULT tcp_barrier_p10_us %.2f\nRESULT tcp_barrier_p90_us %.2f\n",
              percentile(us, 0.5), percentile(us, 0.1), percentile(us, 0.9));
  return rc;
}

} // namespace

int run(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "barrier") == 0) {
    am::bench::flags flag(argc, argv, "tcp_peer barrier: a dissemination barrier over loopback TCP between forked processes");
    const auto processes = std::clamp(flag.integer("--processes", 4, "processes (2 to 64)"), 2LL, 64LL);
    const auto warmup = flag.integer("--warmup", 200, "untimed rounds first");
    const auto rounds = std::max(1LL, flag.integer("--rounds", 2000, "timed rounds"));
    flag.finish();
    return barrier_main(static_cast<int>(processes), warmup, rounds);
  }
  am::bench::flags flag(argc, argv, "tcp_peer [transfer]: bytes moved over one loopback TCP connection");
  long long mib = std::max(1LL, flag.integer("--mib", 256, "MiB per operation"));
  long long warmup = flag.integer("--warmup", 2, "untimed rounds first");
  long long rounds = std::max(1LL, flag.integer("--rounds", 8, "timed rounds"));
  flag.finish();
  std::size_t count = static_cast<std::size_t>(mib) << 20;

  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener, 1) != 0)
    fail("tcp_peer: listen");
  socklen_t len = sizeof addr;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);

  pid_t child = ::fork();
  if (child == 0) {
    // The writer.
    ::alarm(300);
    ::close(listener);
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
      fail("tcp_peer: connect");
    set_nodelay(fd);
    std::vector<std::uint8_t> buffer(count);
    for (std::size_t i = 0; i < count; ++i)
      buffer[i] = am::bench::transfer_pattern(i);
    char go = 0;
    while (::read(fd, &go, 1) == 1 && go == 'g')
      if (!write_all(fd, buffer.data(), count))
        fail("tcp_peer: write");
    ::close(fd);
    ::_exit(0);
  }
  // The reader.
  ::alarm(300);
  int fd = ::accept(listener, nullptr, nullptr);
  if (fd < 0)
    fail("tcp_peer: accept");
  set_nodelay(fd);
  std::vector<std::uint8_t> buffer(count, 0);
  std::vector<double> seconds;
  for (long long k = 0; k < warmup + rounds; ++k) {
    auto start = clock_type::now();
    if (::write(fd, "g", 1) != 1 || !read_all(fd, buffer.data(), count))
      fail("tcp_peer: transfer");
    if (k >= warmup)
      seconds.push_back(std::chrono::duration<double>(clock_type::now() - start).count());
  }
  ::write(fd, "q", 1);
  ::close(fd);
  int status = 0;
  ::waitpid(child, &status, 0);
  const bool right = am::bench::holds_transfer_pattern(buffer);
  am::bench::report_transfer("loopback TCP", "tcp_transfer_gbs", count, seconds, right);
  return right && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int main(int argc, char** argv) { return am::bench::guarded_main("tcp_peer", run, argc, argv); }
