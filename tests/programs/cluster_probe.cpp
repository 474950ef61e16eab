// A program the cluster tests start several times: each process joins the cluster its AM_*
// variables describe and plays one scenario, printing what it saw on one line per fact
// ("devices: ...", "error process_failure_error: ..."), so tests can check every process.
//
//   cluster_probe join [HOLD_MS]          list the global devices, meet at a barrier (then stay)
//   cluster_probe kv                      process 0 sets a key, the others wait for it
//   cluster_probe barrier-without P       every process but P waits at a barrier; P sleeps
//   cluster_probe desync                  process 0 issues another collective than the others
//   cluster_probe die-in-barrier P SIG    P raises SIG (9: killed, 19: stopped) while the others wait
//   cluster_probe announce VERSION P      process P announces another build version at join
//   cluster_probe serve-after-garbage     process 0 sends garbage to the coordinator port first
//   cluster_probe barriers N              N barriers in a row (ordering and reuse of names)
//   cluster_probe barrier-desync          after a first barrier, process 1 names its second one
//                                         differently; then one more barrier
//   cluster_probe store-round-trips N     process 1 reads a key N times (one round trip each)
//   cluster_probe die-in-collective P [SIG [N]]
//                                         all-reduces N floats (default 4 Mi: through Gloo) in a loop;
//                                         P raises SIG (default 9; 19: stopped) in the middle
//   cluster_probe die-in-transfer P SIG MIB
//                                         the last but one process sends MIB MiB to the last in a
//                                         loop (send/recv: over shared memory on one machine); P
//                                         raises SIG (9: killed, 19: stopped) in the middle of one;
//                                         the others wait at a barrier
//   cluster_probe die-before-transfer P   P dies instead of sending its part of a global sum
//   cluster_probe collectives [COUNT]     every collective of the engine against the host
//   cluster_probe data-plane FLAG         Gloo's engine forms while hostile_peer attacks process 0's
//                                         pair listeners; the others start once FLAG exists
#include "actormesh.hpp"
#include "support/gloo_addresses.hpp"
#include "support/probe_output.hpp"
#include "support/reach_line.hpp"
#include "cluster/join.hpp"
#include "devices/collectives/gloo_engine.hpp"
#include "devices/detail/runtime_impl.hpp"
#include "observability/stats_counters.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <caf/binary_serializer.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

using am::testing::report;
using am::testing::say;

/// Runs `step()` in a loop (at most 100,000 rounds); a `victim` raises `sig` 5 ms into round 3
/// (inside a later step: a large one lasts well past 5 ms, and small ones follow each other without
/// a pause). Prints the error that ends the loop (or `went_on`), "failed after ms: N" counted from
/// the end of round 2, and "later: <error>" of `after()`, a step on what the failure broke.
template <class Step, class After>
void die_in_loop(bool victim, int sig, const char* went_on, Step step, After after) {
  auto start = clock_type::now();
  try {
    for (int round = 0; round < 100000; ++round) {
      if (victim && round == 3)
        std::thread([sig] {
          std::this_thread::sleep_for(5ms);
          say("raising signal " + std::to_string(sig));
          std::raise(sig);
        }).detach();
      step();
      if (round == 2)
        start = clock_type::now();
    }
    say(went_on);
  } catch (const std::exception& e) {
    report(e);
  }
  say("failed after ms: "
      + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start).count()));
  try {
    after();
  } catch (const std::exception& e) {
    say(std::string("later: ") + e.what());
  }
}

/// Connects to 127.0.0.1:port and writes `bytes` (the coordinator may close the connection
/// part-way, which is what it should do with garbage: no SIGPIPE, a short write is fine); returns
/// whether the connection was made.
bool send_raw(int port, const std::string& bytes) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  if (connected)
    (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  std::this_thread::sleep_for(50ms);
  ::close(fd);
  return connected;
}

/// Garbage of every kind a hostile or confused peer might send to the coordinator's port.
void send_garbage(int port) {
  std::string random(4096, '\0');
  unsigned seed = 12345;
  for (auto& c : random)
    c = static_cast<char>((seed = seed * 1103515245u + 12345u) >> 16);
  std::string huge_header(64, '\0');
  // A BASP-sized header whose payload length field claims about 4 GB.
  for (int k = 0; k < 64; ++k)
    huge_header[static_cast<std::size_t>(k)] = static_cast<char>(k % 3 == 0 ? 0xff : k);
  std::string http = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  int sent = 0;
  for (auto* bytes : {&random, &huge_header, &http})
    sent += send_raw(port, *bytes) ? 1 : 0;
  std::string ff(1 << 20, '\xff');
  sent += send_raw(port, ff) ? 1 : 0;
  say("garbage connections made: " + std::to_string(sent));
}

std::vector<am::host_array::slice_spec> slices_of(const am::shard_index& block) {
  std::vector<am::host_array::slice_spec> out;
  for (auto& r : block)
    out.push_back({r.start, r.stop, 1});
  return out;
}

/// This process's peak resident memory (VmHWM), in KiB.
long peak_rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::stol(line.substr(6));
  return -1;
}

/// Waits (at most `limit`) until `path` exists.
void wait_for_file(const char* path, std::chrono::seconds limit) {
  auto until = clock_type::now() + limit;
  while (::access(path, F_OK) != 0 && clock_type::now() < until)
    std::this_thread::sleep_for(20ms);
}

int coordinator_port() {
  std::string addr = std::getenv("AM_COORDINATOR");
  return std::stoi(addr.substr(addr.rfind(':') + 1));
}

int run(int argc, char** argv) {
  std::string scenario = argc > 1 ? argv[1] : "join";
  if (scenario == "announce") {
    if (std::atoi(argv[3]) == std::atoi(std::getenv("AM_PROCESS_ID")))
      am::detail::set_announced_version_for_testing(argv[2]);
  }
  am::runtime rt;
  int me = am::process_index();
  int n = am::process_count();
  say("process " + std::to_string(me) + " of " + std::to_string(n));
  if (scenario == "join") {
    std::string line = "devices:";
    for (auto& d : am::devices())
      line += " " + am::to_string(d) + "@" + std::to_string(d.process_index);
    say(line);
    std::string local = "local:";
    for (auto& d : am::local_devices())
      local += " " + std::to_string(d.id);
    say(local);
    say(am::testing::reach_line());
    // A call to another process's device is refused by that device's endpoint here.
    auto& other = am::devices()[static_cast<std::size_t>((me + 1) % n) * am::local_devices().size()];
    try {
      am::upload(other, std::vector<std::byte>(4), am::value_type{am::dtype::float32, {1}});
      say("upload to another process's device: accepted");
    } catch (const am::runtime_error& e) {
      say(std::string("upload to another process's device: ") + e.what());
    }
    am::distributed::wait_at_barrier("joined", 10s);
    say("barrier passed");
    if (argc > 2)
      std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(argv[2])));
  } else if (scenario == "kv") {
    if (me == 0)
      am::distributed::key_value_set("greeting", "hello from 0");
    say("value: " + am::distributed::blocking_key_value_get("greeting", 10s));
    am::distributed::wait_at_barrier("kv done", 10s);
  } else if (scenario == "barrier-without") {
    int absent = std::atoi(argv[2]);
    if (me == absent) {
      std::this_thread::sleep_for(4s);
      say("absent process done");
    } else {
      auto start = clock_type::now();
      try {
        am::distributed::wait_at_barrier("lonely", 1500ms);
        say("barrier passed (unexpected)");
      } catch (const std::exception& e) {
        report(e);
      }
      say("waited ms: " + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start).count()));
    }
  } else if (scenario == "desync") {
    auto& cluster = am::detail::current_runtime()->cluster();
    std::vector<int> all;
    for (int p = 0; p < n; ++p)
      all.push_back(p);
    std::string signature = me == 0 ? "all_reduce(sum) float32[1024]" : "all_gather float32[1024]";
    try {
      cluster.check_collective("world", 0, all, signature, 10s);
      say("collective agreed (unexpected)");
    } catch (const std::exception& e) {
      report(e);
    }
  } else if (scenario == "die-in-barrier") {
    int victim = std::atoi(argv[2]);
    int sig = std::atoi(argv[3]);
    am::distributed::wait_at_barrier("before", 10s);
    if (me == victim) {
      std::this_thread::sleep_for(300ms);
      say("raising signal " + std::to_string(sig));
      std::raise(sig);
      // Resumed (SIGCONT) after the others declared it failed: it must hear that it is out.
      try {
        am::distributed::wait_at_barrier("after", 10s);
        say("barrier passed (unexpected)");
      } catch (const std::exception& e) {
        report(e);
      }
    } else {
      auto start = clock_type::now();
      try {
        am::distributed::wait_at_barrier("after", 60s);
        say("barrier passed (unexpected)");
      } catch (const std::exception& e) {
        report(e);
        if (auto* f = dynamic_cast<const am::process_failure_error*>(&e)) {
          std::string ids;
          for (int id : f->failed_devices())
            ids += " " + std::to_string(id);
          say("failed process " + std::to_string(f->process()) + " devices:" + ids);
        }
      }
      say("detected after ms: "
          + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start).count() - 300));
      // Later requests fail at once too.
      try {
        am::distributed::wait_at_barrier("later", 10s);
      } catch (const std::exception& e) {
        say(std::string("later: ") + e.what());
      }
    }
  } else if (scenario == "serve-after-garbage") {
    if (me == 0)
      send_garbage(coordinator_port());
    am::distributed::wait_at_barrier("after garbage", 10s);
    if (me == 1)
      am::distributed::key_value_set("still", "serving");
    say("value: " + am::distributed::blocking_key_value_get("still", 10s));
    say("still serving");
  } else if (scenario == "under-attack") {
    // The test attacks the coordinator's port while every process waits for argv[2] to exist,
    // then checks that the cluster still serves with every member.
    if (me == 1) {
      auto impl = am::detail::current_runtime();
      std::vector<char> node;
      caf::binary_serializer sink{impl->system(), node};
      if (sink(impl->system().node()))
        throw std::runtime_error("cannot serialize this node's id");
      std::string hex;
      for (char c : node)
        hex += fmt::format("{:02x}", static_cast<unsigned char>(c));
      say("identity: " + hex + " " + std::to_string(impl->cluster().actor().id()));
    }
    am::distributed::wait_at_barrier("before attack", 20s);
    wait_for_file(argv[2], 60s);
    am::distributed::wait_at_barrier("after attack", 20s);
    if (me == 1)
      am::distributed::key_value_set("after attack", "served");
    say("value: " + am::distributed::blocking_key_value_get("after attack", 20s));
    if (me == 0)
      say("coordinator peak rss kb: " + std::to_string(peak_rss_kb()));
    say("still serving");
  } else if (scenario == "barriers") {
    int count = std::atoi(argv[2]);
    auto start = clock_type::now();
    for (int k = 0; k < count; ++k)
      am::distributed::wait_at_barrier("loop", 10s);
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now() - start).count();
    say("barriers: " + std::to_string(count) + " in us: " + std::to_string(us));
  } else if (scenario == "barrier-desync") {
    am::distributed::wait_at_barrier("first", 10s); // at the supervisor; then between the processes
    try {
      am::distributed::wait_at_barrier(me == 1 ? "odd" : "even", 10s);
      say("second barrier passed (unexpected)");
    } catch (const std::exception& e) {
      report(e);
    }
    am::distributed::wait_at_barrier("after the desync", 10s);
    am::distributed::wait_at_barrier("and one more", 10s);
    say("barriers after the desync passed");
  } else if (scenario == "arrays") {
    // A global (16, 8) array over every device of every process, built from a callback per block;
    // an elementwise jit runs each process's shards; a reduction and a resharding move bytes
    // between processes.
    am::mesh m(am::create_device_mesh({static_cast<std::int64_t>(am::device_count())}, am::devices()), {"x"});
    auto sharding = am::make_named_sharding(m, am::P("x"));
    auto global = am::host_array::arange(16 * 8, am::dtype::float32).reshape({16, 8});
    auto x = am::make_array_from_callback({16, 8}, sharding, [&](const am::shard_index& block) {
      return global.slice(slices_of(block));
    });
    say("fully addressable: " + std::string(x.is_fully_addressable() ? "yes" : "no"));
    auto f = am::jit([](const am::array& a) { return a * 2.0 + 1.0; });
    auto y = f(x);
    bool ok = true;
    for (auto& s : y.addressable_shards()) {
      auto piece = am::shard_data(y, s).to_host();
      auto want = global.slice(slices_of(s.index));
      for (std::int64_t k = 0; k < piece.size(); ++k)
        ok = ok && piece.data<float>()[k] == want.data<float>()[k] * 2.0f + 1.0f;
    }
    say(std::string("local shards of jit: ") + (ok ? "ok" : "WRONG"));
    try {
      y.to_host();
    } catch (const std::exception& e) {
      report(e);
    }
    auto total = am::sum(y).to_host();
    say("sum: " + am::to_string(total));
    auto replicated = am::device_put(y, am::make_named_sharding(m, am::P()));
    say("replicated[15, 7]: " + am::to_string(replicated.to_host().slice({{15, 16, 1}, {7, 8, 1}})));
    am::distributed::wait_at_barrier("arrays done", 30s);
  } else if (scenario == "sum-transfers") {
    // A sum over one device per process: how many shard transfers this process took part in (the
    // runtime's counters), once every process holds the result.
    am::mesh m(am::create_device_mesh({static_cast<std::int64_t>(am::device_count())}, am::devices()), {"x"});
    auto x = am::make_array_from_callback({static_cast<std::int64_t>(8 * n), 8}, am::make_named_sharding(m, am::P("x")),
                                          [](const am::shard_index& b) {
                                            return am::host_array::full({b[0].size(), b[1].size()}, 1.0, am::dtype::float32);
                                          });
    const auto before = am::detail::stats::transfers().transfers.load();
    say("sum: " + am::to_string(am::sum(x).to_host()));
    am::distributed::wait_at_barrier("summed", 30s);
    // The last send's count lands just after its bytes left: wait for the figure to settle.
    auto counted = [&] { return am::detail::stats::transfers().transfers.load() - before; };
    const std::uint64_t expected = me == 0 ? static_cast<std::uint64_t>(2 * (n - 1)) : 2;
    for (auto until = clock_type::now() + 5s; counted() < expected && clock_type::now() < until;)
      std::this_thread::sleep_for(10ms);
    say("transfers: " + std::to_string(counted()));
  } else if (scenario == "die-in-collective") {
    // Every process all-reduces N floats in a loop; process P raises SIG in the middle: 4 Mi floats
    // (16 MiB) move through Gloo, and a few hundred travel with their check over shared memory.
    int victim = std::atoi(argv[2]);
    int sig = argc > 3 ? std::atoi(argv[3]) : SIGKILL;
    std::size_t elements = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : (4u << 20);
    auto world = am::make_communicator("dying");
    std::vector<float> data(elements, 1.0f), out(data.size());
    die_in_loop(me == victim, sig, "collectives went on (unexpected)", [&] {
      world->all_reduce(data.data(), out.data(), data.size(), am::dtype::float32, am::reduce_op::sum,
                        std::chrono::milliseconds(30000));
    }, [&] { world->all_reduce(data.data(), out.data(), 1, am::dtype::float32, am::reduce_op::sum); });
  } else if (scenario == "die-in-transfer") {
    // The last but one process sends to the last, MIB MiB at a time; P raises SIG 5 ms into
    // round 3. Process 0 (the coordinator) is neither, so that either may die.
    int victim = std::atoi(argv[2]);
    int sig = std::atoi(argv[3]);
    const std::size_t bytes = std::strtoull(argv[4], nullptr, 10) << 20;
    const int sender = am::process_count() - 2, receiver = am::process_count() - 1;
    auto world = am::make_communicator("moving");
    if (me != sender && me != receiver) {
      try {
        am::distributed::wait_at_barrier("transfers over", 60s);
        say("barrier passed (unexpected)");
      } catch (const std::exception& e) {
        report(e);
      }
      return 0;
    }
    std::vector<std::uint8_t> buffer(bytes, static_cast<std::uint8_t>(me + 1));
    const int peer = me == sender ? receiver : sender;
    die_in_loop(me == victim, sig, "transfers went on (unexpected)", [&] {
      if (me == sender)
        world->send(buffer.data(), bytes, am::dtype::uint8, peer, 0, std::chrono::milliseconds(30000));
      else
        world->recv(buffer.data(), bytes, am::dtype::uint8, peer, 0, std::chrono::milliseconds(30000));
    }, [&] { world->send(buffer.data(), 1, am::dtype::uint8, peer, 0); });
  } else if (scenario == "die-before-transfer") {
    // A global array's sum needs every process's partial sum; process P dies instead of sending.
    int victim = std::atoi(argv[2]);
    am::mesh m(am::create_device_mesh({static_cast<std::int64_t>(am::device_count())}, am::devices()), {"x"});
    auto x = am::make_array_from_callback({48, 8}, am::make_named_sharding(m, am::P("x")), [](const am::shard_index& b) {
      return am::host_array::full({b[0].size(), b[1].size()}, 1.0, am::dtype::float32);
    });
    am::distributed::wait_at_barrier("built", 10s);
    if (me == victim) {
      say("raising signal 9");
      std::raise(SIGKILL);
    }
    auto start = clock_type::now();
    try {
      auto total = am::sum(x).to_host();
      say("sum arrived (unexpected): " + am::to_string(total));
    } catch (const std::exception& e) {
      report(e);
    }
    say("failed after ms: "
        + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start).count()));
  } else if (scenario == "collectives") {
    // Every collective of the engine across the real processes, each against the same computation
    // on the host: process p contributes x_p[i] = p * 1000 + i.
    // COUNT (argv[2], default 1003: not a multiple of the process count) float64 per process: up to
    // 256 KiB across the processes the bytes travel with the check over shared memory, beyond
    // through Gloo.
    auto world = am::make_communicator("every collective");
    const std::size_t count = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1003;
    auto value = [](int p, std::size_t i) { return static_cast<double>(p * 1000 + static_cast<int>(i)); };
    std::vector<double> mine(count), out(count);
    for (std::size_t i = 0; i < count; ++i)
      mine[i] = value(me, i);
    int bad = 0;
    auto expect = [&](bool ok, const char* what) {
      if (!ok) {
        ++bad;
        say(std::string("WRONG ") + what);
      }
    };
    for (auto op : {am::reduce_op::sum, am::reduce_op::mean, am::reduce_op::max, am::reduce_op::min}) {
      world->all_reduce(mine.data(), out.data(), count, am::dtype::float64, op);
      bool ok = true;
      for (std::size_t i = 0; i < count; ++i) {
        double sum = 0, mx = value(0, i), mn = value(0, i);
        for (int p = 0; p < n; ++p) {
          sum += value(p, i);
          mx = std::max(mx, value(p, i));
          mn = std::min(mn, value(p, i));
        }
        double want = op == am::reduce_op::sum ? sum : op == am::reduce_op::mean ? sum / n : op == am::reduce_op::max ? mx : mn;
        ok = ok && out[i] == want;
      }
      expect(ok, "all_reduce");
    }
    std::vector<double> gathered(count * static_cast<std::size_t>(n));
    world->all_gather(mine.data(), gathered.data(), count, am::dtype::float64);
    bool ok = true;
    for (int p = 0; p < n; ++p)
      for (std::size_t i = 0; i < count; ++i)
        ok = ok && gathered[static_cast<std::size_t>(p) * count + i] == value(p, i);
    expect(ok, "all_gather");
    auto block = am::split_block(count, n, me);
    std::vector<double> scattered(block.count);
    world->reduce_scatter(mine.data(), scattered.data(), count, am::dtype::float64, am::reduce_op::sum);
    ok = true;
    for (std::size_t i = 0; i < block.count; ++i) {
      double sum = 0;
      for (int p = 0; p < n; ++p)
        sum += value(p, block.offset + i);
      ok = ok && scattered[i] == sum;
    }
    expect(ok, "reduce_scatter");
    std::vector<double> cast = mine;
    world->broadcast(cast.data(), count, am::dtype::float64, n - 1);
    ok = true;
    for (std::size_t i = 0; i < count; ++i)
      ok = ok && cast[i] == value(n - 1, i);
    expect(ok, "broadcast");
    const std::size_t per = 5, total = per * static_cast<std::size_t>(n);
    std::vector<double> send(total), recv(total);
    for (std::size_t j = 0; j < total; ++j)
      send[j] = me * 100 + static_cast<double>(j); // block j / per goes to rank j / per
    world->all_to_all(send.data(), recv.data(), total, am::dtype::float64);
    ok = true;
    for (int p = 0; p < n; ++p)
      for (std::size_t k = 0; k < per; ++k)
        ok = ok && recv[static_cast<std::size_t>(p) * per + k] == p * 100 + static_cast<double>(static_cast<std::size_t>(me) * per + k);
    expect(ok, "all_to_all");
    // A ring of send/recv: rank r sends to r+1 and receives from r-1 (even ranks send first).
    std::vector<double> from_left(count);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    if (me % 2 == 0) {
      world->send(mine.data(), count, am::dtype::float64, right, 7);
      world->recv(from_left.data(), count, am::dtype::float64, left, 7);
    } else {
      world->recv(from_left.data(), count, am::dtype::float64, left, 7);
      world->send(mine.data(), count, am::dtype::float64, right, 7);
    }
    ok = true;
    for (std::size_t i = 0; i < count; ++i)
      ok = ok && from_left[i] == value(left, i);
    expect(ok, "send/recv");
    say(bad == 0 ? "collectives agree with the host" : "collectives WRONG");
  } else if (scenario == "data-plane") {
    // Gloo's engine itself (what a communicator creates after its step 0): process 0 starts
    // first, so its pair listeners wait for ranks 1.. while the test attacks them; the others
    // start once the attacker has written FLAG. Then one all-reduce checks the mesh.
    auto& cluster = am::detail::current_runtime()->cluster();
    const std::string prefix = "probe/data-plane/";
    std::unique_ptr<am::detail::gloo_engine> engine;
    am::distributed::wait_at_barrier("before data plane", 20s);
    auto start = clock_type::now();
    if (me == 0) {
      std::string error;
      std::thread creating([&] {
        try {
          engine = std::make_unique<am::detail::gloo_engine>(cluster, prefix, 0, n, "127.0.0.1", clock_type::now() + 40s);
        } catch (const std::exception& e) {
          error = e.what();
        }
      });
      try {
        std::string ports;
        for (int port : am::testing::gloo_pair_ports(cluster.kv_get(prefix + "0", 20s)))
          ports += (ports.empty() ? "" : ",") + std::to_string(port);
        say("pair ports: " + ports);
      } catch (const std::exception& e) {
        say(std::string("no pair ports: ") + e.what());
      }
      creating.join();
      if (!engine)
        throw std::runtime_error("creation failed: " + error);
    } else {
      wait_for_file(argv[2], 60s);
      start = clock_type::now();
      engine = std::make_unique<am::detail::gloo_engine>(cluster, prefix, me, n, "127.0.0.1", start + 40s);
    }
    say("creation ms: " + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start).count()));
    std::vector<std::int32_t> mine(1000, me + 1), out(1000);
    engine->all_reduce(mine.data(), out.data(), mine.size(), am::dtype::int32, am::reduce_op::sum, 1, 20000ms);
    const bool ok = std::all_of(out.begin(), out.end(), [&](std::int32_t v) { return v == n * (n + 1) / 2; });
    say(ok ? "data plane sum ok" : "data plane sum WRONG");
  } else if (scenario == "store-round-trips") {
    // Process 1 reads a key N times: one request and answer each, the client's round trip.
    int count = std::atoi(argv[2]);
    if (me == 0)
      am::distributed::key_value_set("rt", "x");
    am::distributed::wait_at_barrier("set", 10s);
    if (me == 1) {
      auto start = clock_type::now();
      for (int k = 0; k < count; ++k)
        am::distributed::blocking_key_value_get("rt", 10s);
      auto us = std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now() - start).count();
      say("round trips: " + std::to_string(count) + " in us: " + std::to_string(us));
    }
    am::distributed::wait_at_barrier("done", 60s);
  } else {
    say("unknown scenario " + scenario);
    return 3;
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    report(e);
    return 2;
  }
}
