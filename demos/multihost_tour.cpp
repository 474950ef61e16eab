// The multihost tour: every example of seeds/002 (jax.experimental.multihost_utils) in
// C++, then a training loop that survives a preemption notice, then live_devices losing a process.
//
//   ./build/tools/actormesh launch -n 4 --cpu-devices 2 --keep-going -- ./build/demos/multihost_tour
//
// Every process runs this same program and calls the utilities in the same order. In the training
// loop process 1 sends itself SIGTERM at step 3: every process learns of it, they agree on one
// step, print "preemption sync point at step N", save a checkpoint there, restore it onto another
// sharding and check the values. Last, in a live_devices block the last process is killed
// (SIGKILL) and every survivor prints exactly its devices. The launcher reports that process as
// killed; with --keep-going the survivors go on, stop cleanly and the launch exits 0 (without it,
// the launcher stops them and exits 137). Run alone (no
// launcher) it is a cluster of one process and skips the parts that need several.
#include "demos/support/demo_command_line.hpp"
#include <actormesh.hpp>

#include <fmt/core.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace {

namespace mh = am::multihost;
using am::host_array;

int me = 0;

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

/// Process 0 prints a section's title; everyone prints its results.
void section(const std::string& title) {
  if (me == 0)
    say("\n== " + title);
}

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string out = "(";
  for (std::size_t k = 0; k < s.size(); ++k)
    out += (k ? ", " : "") + std::to_string(s[k]);
  return out + (s.size() == 1 ? ",)" : ")");
}

std::string one_line(const host_array& h) {
  std::string text = am::to_string(h);
  std::string out;
  for (char c : text)
    if (c != '\n')
      out += c;
  return out;
}

std::string device_list(const std::vector<am::device>& devices) {
  std::string out = "[";
  for (std::size_t k = 0; k < devices.size(); ++k)
    out += (k ? ", " : "") + am::to_string(devices[k]);
  return out + "]";
}

void sync_and_check(int n) {
  section("sync_global_devices and assert_equal");
  mh::sync_global_devices("data_ready");
  say(fmt::format("sync_global_devices('data_ready'): all {} processes arrived", n));
  mh::sync_global_devices("step_100_done");
  say("sync_global_devices('step_100_done'): passed");
  mh::assert_equal(host_array::arange(4), "inputs differ");
  say("assert_equal(np.arange(4)): the same on every process");
  if (n > 1) {
    try {
      mh::assert_equal(host_array::full({1}, me), "process ids differ");
    } catch (const am::assertion_error& e) {
      say(std::string("assert_equal(process_index): AssertionError: ") + e.what());
    }
  }
}

void broadcast_and_gather() {
  section("broadcast_one_to_all");
  auto mine = host_array::arange(4.0 * me, 4.0 * me + 4, 1, am::dtype::int32);
  say("input np.arange(4) + process_index * 4: " + one_line(mine) + " -> broadcast: "
      + one_line(mh::broadcast_one_to_all(mine)));
  auto [a, b] = mh::broadcast_one_to_all(std::make_tuple(mine, mine));
  say("a tree (x, x): (" + one_line(a) + ", " + one_line(b) + ")");
  auto u8 = mh::broadcast_one_to_all(mine.astype(am::dtype::uint8));
  say("uint8 stays " + std::string(am::name(u8.dtype())) + ": " + one_line(u8));

  section("process_allgather");
  auto stacked = mh::process_allgather(mine);
  say("stacked (tiled=False): shape " + shape_text(stacked.shape()) + " " + one_line(stacked));
  auto tiled = mh::process_allgather(mine, true);
  say("concatenated (tiled=True): shape " + shape_text(tiled.shape()) + " " + one_line(tiled));
  auto scalars = mh::process_allgather(me);
  say("a scalar is stacked: shape " + shape_text(scalars.shape()) + " " + one_line(scalars));
}

void host_local_and_global(int n) {
  section("host_local_array_to_global_array and global_array_to_host_local_array");
  const auto L = static_cast<std::int64_t>(am::local_device_count());
  am::mesh flat({static_cast<std::int64_t>(am::device_count())}, am::devices(), {"x"});
  // The seed's np.arange(4) per host, grown to a multiple of the local device count (run alone on
  // 8 devices, 4 elements cannot be split 8 ways); under the launcher's 2 devices a host it is 4.
  const std::int64_t per_host = L * ((4 + L - 1) / L);
  auto local = host_array::arange(0, per_host, 1, am::dtype::int64);
  for (std::int64_t k = 0; k < per_host; ++k)
    local.set({k}, k * me);
  auto g = mh::host_local_array_to_global_array(local, flat, am::P("x"));
  say("np.arange(" + std::to_string(per_host) + ") * host_id over Mesh(devices, 'x'), P('x'): global shape " + shape_text(g.shape()) + ", value "
      + one_line(mh::process_allgather(g, true)));
  am::mesh hosts({n, L}, am::devices(), {"host", "dev"});
  auto gh = mh::host_local_array_to_global_array(local, hosts, am::P("host"));
  say("the same over Mesh((hosts, devices), ('host', 'dev')), P('host'): " + one_line(mh::process_allgather(gh, true))
      + ", each host's slice replicated on its " + std::to_string(L) + " devices: "
      + (gh.addressable_shards().size() == static_cast<std::size_t>(L) ? "yes" : "no"));
  auto rep = mh::host_local_array_to_global_array(host_array::arange(4), hosts, am::P());
  say("np.arange(4) with P(): global shape " + shape_text(rep.shape()) + ", replicated everywhere: "
      + one_line(rep.to_host()));
  am::mesh m({n, L}, am::devices(), {"x", "y"});
  auto global = am::device_put(host_array::arange(2 * n * L, am::dtype::float32).reshape({2 * n, L}),
                               am::make_named_sharding(m, am::P("x", "y")));
  auto back = mh::global_array_to_host_local_array(global, m, am::P("x"));
  say("global " + shape_text(global.shape()) + " sharded P('x', 'y') -> host-local with P('x'): shape "
      + shape_text(back.shape()) + " " + one_line(back.to_host()));
  try {
    mh::host_local_array_to_global_array(local, flat, am::none);
  } catch (const am::value_error& e) {
    say(std::string("pspecs=None: ValueError: ") + e.what());
  }
}

/// A training loop that stops at the preemption sync point: the state is a global array updated
/// once per step; at the sync point every process saves it, then restores and checks it.
void training(int n) {
  section("reached_preemption_sync_point: a training loop, SIGTERM on process 1 at step 3");
  if (n == 1) {
    say("one process: no distributed runtime, so reached_preemption_sync_point is false");
    return;
  }
  am::mesh flat({static_cast<std::int64_t>(am::device_count())}, am::devices(), {"x"});
  auto sharded = am::make_named_sharding(flat, am::P("x"));
  am::array w = am::device_put(host_array::zeros({2 * am::device_count()}, am::dtype::float32), sharded);
  // Every process must write into the same folder: process 0's pid, broadcast.
  const auto id = mh::broadcast_one_to_all(static_cast<std::int64_t>(::getpid()));
  const std::string dir = "/tmp/am_multihost_tour." + std::to_string(id);
  std::int64_t saved_at = -1;
  for (std::int64_t step = 0; step < 100000; ++step) {
    if (mh::reached_preemption_sync_point(step)) {
      say("preemption sync point at step " + std::to_string(step));
      mh::save_checkpoint(dir, std::make_tuple(w, step));
      saved_at = step;
      break;
    }
    w = w + 1.0f; // one "training step"
    w.block_until_ready();
    if (me == 1 && step == 3) {
      say("process 1 receives SIGTERM at step 3");
      std::raise(SIGTERM);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // Restore onto another sharding (replicated) and check: after `saved_at` steps every element is saved_at.
  am::sharding_ptr replicated = am::make_named_sharding(flat, am::P());
  auto [rw, rstep] = mh::restore_checkpoint(dir, std::make_tuple(replicated, replicated));
  auto value = rw.to_host();
  bool ok = rstep.to_host().item<std::int64_t>() == saved_at;
  for (float v : value.to_vector<float>())
    ok = ok && v == static_cast<float>(saved_at);
  say(fmt::format("restored the checkpoint of step {} onto P(): {} elements, all {}: {}", saved_at, value.size(),
                  saved_at, ok ? "ok" : "WRONG"));
  mh::sync_global_devices("checkpoint checked");
  if (me == 0)
    std::filesystem::remove_all(dir);
}

void live(int n) {
  section("live_devices");
  mh::live_devices(am::devices(), [&](const std::vector<am::device>& devices) {
    say("live devices: " + std::to_string(devices.size()) + " of " + std::to_string(am::device_count()));
  });
  if (n == 1)
    return;
  const int victim = n - 1;
  if (me == 0)
    say("now process " + std::to_string(victim) + " is killed inside the block");
  try {
    mh::live_devices(am::devices(), [&](const std::vector<am::device>&) {
      if (me == victim)
        std::raise(SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    });
    say("the block passed (it should not have)");
  } catch (const am::process_failure_error& e) {
    std::vector<am::device> failed;
    for (int id : e.failed_devices())
      failed.push_back(am::device_by_id(id));
    say("ProcessFailureError: " + std::string(e.what()) + "; failed_devices: " + device_list(failed));
  }
  mh::live_devices(am::devices(), [&](const std::vector<am::device>& devices) {
    say("live devices afterwards: " + device_list(devices));
  });
}

} // namespace

int main(int argc, char** argv) {
  am::demo::command_line cli("multihost_tour", "Every example of the multihost utilities (seed 002) in C++, a preemption "
                                               "and a lost process (run under `actormesh launch -n 4 --cpu-devices 2`)");
  if (auto status = cli.parse(argc, argv))
    return *status;
  try {
    am::runtime rt(argc, argv);
    me = am::process_index();
    const int n = am::process_count();
    mh::enable_preemption_notice(); // catch SIGTERM from here on
    if (me == 0)
      say(fmt::format("multihost tour: {} processes, {} devices each", n, am::local_device_count()));
    sync_and_check(n);
    broadcast_and_gather();
    host_local_and_global(n);
    training(n);
    live(n);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "multihost_tour: %s\n", e.what());
    return 1;
  }
}
