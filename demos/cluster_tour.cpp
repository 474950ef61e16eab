// The cluster tour: several processes form one cluster and work on one global array.
//
//   ./build/tools/actormesh launch -n 4 --cpu-devices 2 -- ./build/demos/cluster_tour
//
// Every process runs this same program (multi-controller, as jax.distributed.initialize): it
// joins the cluster from the AM_* variables the launcher sets, builds its part of an (8192, 8192)
// array sharded over all 8 devices of the 4 processes, runs the seed's complex_computation under
// jit on its own shards, all-reduces the partial sums through the collectives engine, checks them
// against the runtime's own cross-process sum, and meets the others at a barrier.
//
// Then the same array work from one controller: process 0 becomes the controller of a new
// cluster (single-controller mode) and the other processes its workers, which serve the
// controller's calls on their devices. The controller builds, computes and sums the whole array
// itself; its calls to the workers' shards go over CAF, the bytes between processes through Gloo.
// Run alone (no launcher) it is a cluster of one process and skips the second part.
#include "demos/support/demo_command_line.hpp"
#include <actormesh.hpp>

#include "actormesh/devices/collectives/world.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

/// The seed's complex_computation: (tanh(sin x * cos x) + sqrt|x|) * 2.
am::array complex_computation(const am::array& x) {
  return (am::tanh(am::sin(x) * am::cos(x)) + am::sqrt(am::abs(x))) * 2.0;
}

/// The value of the global array at (i, j): small enough that float32 sums stay exact per row.
float value_at(std::int64_t i, std::int64_t j) {
  return static_cast<float>((i * 31 + j * 17) % 1000) / 1000.0f;
}

double millis_since(clock_type::time_point start) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

/// A TCP port on 127.0.0.1 free a moment ago (the second cluster's coordinator).
int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0
      && ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  if (fd >= 0)
    ::close(fd);
  return port;
}

/// The (8192, 8192) array over every device: mesh (devices/2, 2), rows over 'x', columns over 'y'.
am::sharding_ptr tour_sharding() {
  int count = am::device_count();
  std::int64_t mesh_rows = count >= 2 && count % 2 == 0 ? count / 2 : count;
  std::int64_t mesh_cols = count / mesh_rows;
  am::mesh m(am::create_device_mesh({mesh_rows, mesh_cols}, am::devices()), {"x", "y"});
  return am::make_named_sharding(m, am::P("x", "y"));
}

/// The block `block` of the global array, filled on the host.
am::host_array tour_block(const am::shard_index& block) {
  auto out = am::host_array::empty({block[0].size(), block[1].size()}, am::dtype::float32);
  float* p = out.data<float>();
  for (std::int64_t i = block[0].start; i < block[0].stop; ++i)
    for (std::int64_t j = block[1].start; j < block[1].stop; ++j)
      *p++ = value_at(i, j);
  return out;
}

/// The second part, on the controller: every call goes to the device that holds the shard,
/// whichever process that is.
int drive_workers(const std::string& coordinator, int n) {
  am::options o;
  o.role = am::process_role::controller;
  o.coordinator_address = coordinator;
  o.num_processes = n;
  o.process_id = 0;
  am::runtime rt(o);
  auto say = [](const std::string& line) { std::printf("%s\n", line.c_str()); };
  say("\nSingle-controller: process 0 drives " + std::to_string(am::device_count()) + " devices, "
      + std::to_string(am::device_count() - am::local_device_count()) + " of them in " + std::to_string(n - 1)
      + " workers");
  const std::int64_t rows = 8192, cols = 8192;
  auto start = clock_type::now();
  auto x = am::make_array_from_callback({rows, cols}, tour_sharding(), tour_block);
  x.block_until_ready();
  say("controller built x (" + std::to_string(x.addressable_shards().size()) + " shards, all addressable: "
      + (x.is_fully_addressable() ? "yes" : "no") + ") in " + std::to_string(static_cast<int>(millis_since(start)))
      + " ms");
  std::fputs(am::visualize_array_sharding(x, {.use_color = am::stdout_has_colour()}).c_str(), stdout);
  auto f = am::jit(complex_computation);
  start = clock_type::now();
  auto y = f(x);
  y.block_until_ready();
  say("controller ran complex_computation on every shard in " + std::to_string(static_cast<int>(millis_since(start)))
      + " ms");
  start = clock_type::now();
  auto total = am::sum(y).to_host().data<float>()[0];
  say("controller: am::sum over all 8 devices " + std::to_string(total) + " in "
      + std::to_string(static_cast<int>(millis_since(start))) + " ms");
  // One block back on the host, checked against the same values computed here.
  auto corner = am::shard_data(y, y.addressable_shards().back()).to_host();
  auto& last = y.addressable_shards().back();
  float expected = 0;
  {
    float v = value_at(last.index[0].start, last.index[1].start);
    expected = (std::tanh(std::sin(v) * std::cos(v)) + std::sqrt(std::abs(v))) * 2.0f;
  }
  bool match = std::abs(corner.data<float>()[0] - expected) < 1e-5f;
  say("controller fetched the shard on " + am::to_string(last.device) + " (process "
      + std::to_string(last.device.process_index) + "): first value " + std::to_string(corner.data<float>()[0])
      + (match ? " (matches the host)" : " (DIFFERS from the host)"));
  return match ? 0 : 1;
}

/// The second part, on a worker: serve the controller until it stops.
int serve_controller(const std::string& coordinator, int n, int me) {
  am::options o;
  o.role = am::process_role::worker;
  o.coordinator_address = coordinator;
  o.num_processes = n;
  o.process_id = me;
  am::runtime rt(o);
  std::printf("process %d serves the controller\n", me);
  rt.serve();
  std::printf("process %d: the controller is done\n", me);
  return 0;
}

int run(int argc, char** argv) {
  std::string second_coordinator;
  int status = 0;
  int me = 0, n = 1;
  {
  am::runtime rt(argc, argv);
  me = am::process_index();
  n = am::process_count();
  auto say = [&](const std::string& line) { std::printf("%s\n", line.c_str()); };

  if (me == 0) {
    say("The cluster: " + std::to_string(n) + " processes, " + std::to_string(am::device_count()) + " devices");
    for (auto& d : am::devices())
      say("  " + am::to_string(d) + "  process " + std::to_string(d.process_index));
  }
  std::string local = "process " + std::to_string(me) + " owns";
  for (auto& d : am::local_devices())
    local += " " + am::to_string(d);
  say(local);

  // An (8192, 8192) float32 array over every device: mesh (devices/2, 2), rows over 'x', columns
  // over 'y'. Each process fills only the blocks of its own devices.
  const std::int64_t rows = 8192, cols = 8192;
  auto start = clock_type::now();
  auto x = am::make_array_from_callback({rows, cols}, tour_sharding(), tour_block);
  x.block_until_ready();
  if (me == 0) {
    say("\nx = " + x.to_string());
    std::fputs(am::visualize_array_sharding(x, {.use_color = am::stdout_has_colour()}).c_str(), stdout);
  }
  say("process " + std::to_string(me) + " built its " + std::to_string(x.addressable_shards().size())
      + " shards in " + std::to_string(static_cast<int>(millis_since(start))) + " ms");

  // jit runs each process's shards on its own devices: one fused program per shard.
  auto f = am::jit(complex_computation);
  start = clock_type::now();
  auto y = f(x);
  y.block_until_ready();
  say("process " + std::to_string(me) + " ran complex_computation on its shards in "
      + std::to_string(static_cast<int>(millis_since(start))) + " ms");

  // All-reduce: every process sums its own blocks (replica 0 of each), the collectives engine adds
  // the partial sums of all processes.
  double partial = 0;
  for (auto& s : y.addressable_shards()) {
    if (s.replica_id != 0)
      continue;
    auto block = am::shard_data(y, s).to_host();
    const float* p = block.data<float>();
    for (std::int64_t k = 0; k < block.size(); ++k)
      partial += p[k];
  }
  auto world = am::make_communicator("cluster_tour");
  double total = 0;
  world->all_reduce(&partial, &total, 1, am::dtype::float64, am::reduce_op::sum);

  // The runtime's own global sum (partial sums move between processes inside the plan).
  auto runtime_sum = am::sum(y).to_host().data<float>()[0];
  // am::sum accumulates in float32 (a block of 33M elements per device with 2 devices), the
  // all-reduced partial sums in float64: they agree to float32 summation accuracy.
  double relative = std::abs(runtime_sum - total) / std::abs(total);
  char diff[32];
  std::snprintf(diff, sizeof diff, "%.1e", relative);
  say("process " + std::to_string(me) + ": all-reduced sum " + std::to_string(total) + ", am::sum "
      + std::to_string(runtime_sum) + " (relative difference " + diff + (relative < 1e-2 ? ", agree)" : ", DISAGREE)"));

  start = clock_type::now();
  am::distributed::wait_at_barrier("cluster tour done", 60s);
  say("process " + std::to_string(me) + " passed the barrier after "
      + std::to_string(static_cast<int>(millis_since(start))) + " ms");
  status = relative < 1e-2 ? 0 : 1;
  // The second cluster's coordinator: a port process 0 picks, handed to the others by the store.
  if (n > 1) {
    if (me == 0)
      am::distributed::key_value_set("cluster tour controller", "127.0.0.1:" + std::to_string(free_loopback_port()));
    second_coordinator = am::distributed::blocking_key_value_get("cluster tour controller", 60s);
  }
  } // every process leaves the first cluster here
  if (n == 1 || status != 0)
    return status;
  return me == 0 ? drive_workers(second_coordinator, n) : serve_controller(second_coordinator, n, me);
}

} // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0); // whole lines reach the launcher as they are printed
  am::demo::command_line cli("cluster_tour", "Several processes form one cluster and work on one global array "
                                             "(run under `actormesh launch -n 4 --cpu-devices 2`)");
  if (auto status = cli.parse(argc, argv))
    return *status;
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "cluster_tour: %s\n", e.what());
    return 2;
  }
}
