// A program the multihost tests start as every process of a cluster (AM_* variables): each plays
// one scenario of the multihost utilities and prints what it saw, one fact per line
// ("name: value", "error <kind>: message"), so the tests can check every process.
//
//   multihost_probe broadcast        broadcast_one_to_all: default source, is_source, dtypes, trees
//   multihost_probe allgather        process_allgather: stacked, tiled, scalars, global arrays
//   multihost_probe assert-equal     assert_equal passing, then failing on process 1's value
//   multihost_probe sync             sync_global_devices passing, then with different names
//   multihost_probe sync-without P   every process but P meets at a barrier; P sleeps past it
//   multihost_probe host-local       host_local_array_to_global_array and back, every spec kind
//   multihost_probe mismatch         processes pass trees of different shapes
//   multihost_probe die-in-gather P  gathers in a loop; P kills itself (SIGKILL) at the third
//   multihost_probe checkpoint-save DIR      saves the checkpoint tree (checkpoint_values) into DIR
//   multihost_probe checkpoint-restore DIR   restores it onto other shardings and checks the values
//   multihost_probe live-devices P   three live_devices blocks; P is killed (SIGKILL) in the second
//   multihost_probe preempt P K MODE P raises SIGTERM at step K; every process prints the agreed
//                                    sync point. MODE lockstep: a gather per step; free: process p
//                                    sleeps 2(p+1) ms per step, so they drift apart
#include "actormesh.hpp"
#include "support/probe_output.hpp"

#include <csignal>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

namespace mh = am::multihost;
using am::host_array;

using am::testing::say;

/// "error <kind>: message": the probes' kinds (support/probe_output.hpp) plus assertion_error.
void report(const std::exception& e) {
  const char* kind = dynamic_cast<const am::assertion_error*>(&e) ? "assertion_error" : am::testing::error_kind(e);
  say(std::string("error ") + kind + ": " + e.what());
}

/// Runs `body`, printing its error instead of stopping the scenario.
template <class F>
void attempt(const std::string& label, F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    std::printf("%s: ", label.c_str());
    report(e);
  }
}

std::string shape_of(const host_array& h) {
  std::string out = "(";
  for (std::size_t k = 0; k < h.shape().size(); ++k)
    out += (k ? ", " : "") + std::to_string(h.shape()[k]);
  return out + (h.shape().size() == 1 ? ",)" : ")");
}

std::string describe(const host_array& h) {
  return std::string(am::name(h.dtype())) + shape_of(h) + " " + am::to_string(h);
}

void broadcast(int p, int n) {
  auto x = host_array::arange(4);
  auto mine = host_array::from_vector(std::vector<std::int64_t>{p * 4 + 0, p * 4 + 1, p * 4 + 2, p * 4 + 3});
  say("broadcast: " + describe(mh::broadcast_one_to_all(mine)));
  auto u8 = mine.astype(am::dtype::uint8);
  auto [a, b] = mh::broadcast_one_to_all(std::make_tuple(u8, u8));
  say("broadcast uint8 pair: " + describe(a) + " | " + describe(b));
  // The last process as the source, a mixed tree with scalars, a map and an empty array.
  std::tuple<float, bool, std::map<std::string, host_array>, host_array> t{
      1.5f * static_cast<float>(p), p % 2 == 1, {{"w", host_array::full({2, 2}, p, am::dtype::float16)}},
      host_array::zeros({0, 3}, am::dtype::int32)};
  auto r = mh::broadcast_one_to_all(t, p == n - 1);
  say("broadcast from last: " + std::to_string(std::get<0>(r)) + " " + (std::get<1>(r) ? "true" : "false") + " "
      + describe(std::get<2>(r).at("w")) + " " + describe(std::get<3>(r)));
  auto empty = mh::broadcast_one_to_all(std::tuple<>{});
  (void)empty;
  say("broadcast empty tree: ok");
  attempt("two sources", [&] { mh::broadcast_one_to_all(x, p < 2); });
  attempt("no source", [&] { mh::broadcast_one_to_all(x, false); });
  say("broadcast after errors: " + describe(mh::broadcast_one_to_all(mine)));
  // Trees past the small-tree size take the engine's broadcast: one leaf, and several packed.
  auto big = host_array::full({3000}, static_cast<float>(p), am::dtype::float32);
  auto small = host_array::full({5}, static_cast<std::uint8_t>(p + 10), am::dtype::uint8);
  host_array one = mh::broadcast_one_to_all(big, p == n - 1);
  auto [b1, b2] = mh::broadcast_one_to_all(std::make_tuple(big, small), p == n - 1);
  bool ok = am::array_identical(one, host_array::full({3000}, static_cast<float>(n - 1), am::dtype::float32))
            && am::array_identical(b1, one)
            && am::array_identical(b2, host_array::full({5}, static_cast<std::uint8_t>(n + 9), am::dtype::uint8));
  say(std::string("large broadcast: ") + (ok ? "ok" : "WRONG"));
}

void allgather(int p, int n) {
  auto x = host_array::arange(6, am::dtype::float32).reshape({2, 3});
  auto mine = x.astype(am::dtype::float64);
  for (std::int64_t k = 0; k < 6; ++k)
    mine.set({k / 3, k % 3}, static_cast<double>(10 * p + k));
  say("stacked: " + describe(mh::process_allgather(mine)));
  say("tiled: " + describe(mh::process_allgather(mine, true)));
  say("scalar stacked: " + describe(mh::process_allgather(static_cast<std::int32_t>(p))));
  say("scalar tiled: " + describe(mh::process_allgather(static_cast<std::int32_t>(p), true)));
  std::tuple<std::uint8_t, host_array, std::vector<bool>> mixed{
      static_cast<std::uint8_t>(250 + p), host_array::full({1}, p, am::dtype::bfloat16), {true, p == 0}};
  auto [g0, g1, g2] = mh::process_allgather(mixed, true);
  say("mixed: " + describe(g0) + " | " + describe(g1) + " | " + describe(g2[0]) + " " + describe(g2[1]));
  say("empty array: " + describe(mh::process_allgather(host_array::zeros({0}, am::dtype::int64))));
  // A global array over every process, sharded so no process holds all of it.
  am::mesh m({static_cast<std::int64_t>(am::device_count())}, am::devices(), {"x"});
  auto g = am::device_put(host_array::arange(2 * am::device_count(), am::dtype::int32),
                          am::make_named_sharding(m, am::P("x")));
  say("global fully addressable: " + std::string(g.is_fully_addressable() ? "yes" : "no"));
  say("global tiled: " + describe(mh::process_allgather(g, true)));
  attempt("global stacked", [&] { mh::process_allgather(g, false); });
  attempt("broadcast global", [&] { mh::broadcast_one_to_all(g); });
  mh::assert_equal(std::make_tuple(g, host_array::arange(2)), "a global array is one value");
  say("assert_equal with a global array: passed");
  auto none = mh::process_allgather(std::tuple<>{});
  (void)none;
  say("gather empty tree: ok");
  am::mesh m2({n, static_cast<std::int64_t>(am::local_device_count())}, am::devices(), {"p", "d"});
  auto g2d = am::device_put(host_array::arange(4 * n * 3, am::dtype::float32).reshape({4 * n, 3}),
                            am::make_named_sharding(m2, am::P("p", am::none)));
  say("global 2-d tiled: " + describe(mh::process_allgather(g2d, true)));
  say("gathers after errors: " + describe(mh::process_allgather(p)));
  // Past the small-tree size: one leaf straight into its output, and several packed.
  auto big = host_array::full({2000}, static_cast<std::int64_t>(p), am::dtype::int64);
  host_array one = mh::process_allgather(big);
  auto [l1, l2] = mh::process_allgather(std::make_tuple(big, static_cast<std::int32_t>(p)), true);
  bool ok = one.shape() == host_array::shape_type{n, 2000} && l1.shape() == host_array::shape_type{n * 2000}
            && l2.shape() == host_array::shape_type{n};
  for (int r = 0; r < n && ok; ++r)
    ok = one.get<std::int64_t>({r, 1999}) == r && l1.get<std::int64_t>({r * 2000 + 7}) == r
         && l2.get<std::int32_t>({r}) == r;
  say(std::string("large gathers: ") + (ok ? "ok" : "WRONG"));
}

void assert_equal(int p) {
  std::map<std::string, host_array> same{{"a", host_array::arange(3)}, {"b", host_array::ones({2})}};
  mh::assert_equal(same, "same everywhere");
  say("assert_equal same: passed");
  attempt("assert_equal differs", [&] {
    mh::assert_equal(host_array::from_vector(std::vector<std::int32_t>{1, p == 1 ? 5 : 2}), "values differ");
  });
  attempt("assert_equal scalar", [&] { mh::assert_equal(std::make_tuple(p == 0 ? 1.5 : 2.5), "scalar"); });
  say("after assert_equal: passed");
}

void sync(int p) {
  mh::sync_global_devices("start");
  say("sync start: passed");
  attempt("sync mismatch", [&] { mh::sync_global_devices(p == 0 ? "test message" : "test message2"); });
  mh::sync_global_devices("end");
  say("sync end: passed");
}

void sync_without(int p, int absent) {
  if (p == absent) {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(std::getenv("AM_ABSENT_SLEEP_MS"))));
    return;
  }
  auto t0 = std::chrono::steady_clock::now();
  attempt("sync absent", [&] { mh::sync_global_devices("never complete"); });
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  say("failed after ms: " + std::to_string(ms));
}

void host_local(int p, int n) {
  const auto L = static_cast<std::int64_t>(am::local_device_count());
  am::mesh flat({static_cast<std::int64_t>(am::device_count())}, am::devices(), {"x"});
  auto local = host_array::from_vector(std::vector<std::int64_t>{0, p, 2 * p, 3 * p, 4 * p, 5 * p, 6 * p, 7 * p})
                   .reshape({8});
  auto g = mh::host_local_array_to_global_array(local, flat, am::P("x"));
  say("x global shape: " + shape_of(host_array::zeros(g.shape())) + " addressable "
      + (g.is_fully_addressable() ? "yes" : "no"));
  say("x global value: " + describe(mh::process_allgather(g, true)));
  auto back = mh::global_array_to_host_local_array(g, flat, am::P("x"));
  say("x back: " + describe(back.to_host()) + " addressable " + (back.is_fully_addressable() ? "yes" : "no"));
  // Hosts along one mesh axis: each host's value is replicated over its devices.
  am::mesh hosts({n, L}, am::devices(), {"host", "dev"});
  auto row = host_array::full({1, 2}, static_cast<float>(p), am::dtype::float32);
  auto gh = mh::host_local_array_to_global_array(row, hosts, am::P("host"));
  say("host global: " + describe(mh::process_allgather(gh, true)));
  // P(): the global shape is the local one, replicated everywhere.
  auto rep = mh::host_local_array_to_global_array(host_array::arange(4), hosts, am::P());
  say("replicated: " + shape_of(host_array::zeros(rep.shape())) + " " + describe(rep.to_host()));
  // A tree with per-leaf specs and a 2-d split over both axes.
  auto two = host_array::arange(4 * L, am::dtype::int32).reshape({2, 2 * L});
  std::tuple<host_array, std::vector<host_array>> tree{two, {row}};
  std::tuple<am::partition_spec, std::vector<am::partition_spec>> specs{am::P("host", "dev"), {am::P("host")}};
  auto gt = mh::host_local_array_to_global_array(tree, hosts, specs);
  say("tree global shapes: " + shape_of(host_array::zeros(std::get<0>(gt).shape())) + " "
      + shape_of(host_array::zeros(std::get<1>(gt)[0].shape())));
  auto lt = mh::global_array_to_host_local_array(gt, hosts, specs);
  say("tree back equal: "
      + std::string(am::array_identical(std::get<0>(lt).to_host(), two) && am::array_identical(std::get<1>(lt)[0].to_host(), row)
                        ? "yes"
                        : "no"));
  // An already-global array comes back as is; a local array laid out on the local mesh is reused.
  auto again = mh::host_local_array_to_global_array(g, flat, am::P("x"));
  say("global returned as is: " + std::string(again.state() == g.state() ? "yes" : "no"));
  auto lm = am::local_mesh(flat, p);
  auto on_local = am::device_put(local, am::make_named_sharding(lm, am::P("x")));
  auto reused = mh::host_local_array_to_global_array(on_local, flat, am::P("x"));
  bool shared = true;
  auto a = on_local.addressable_shards(), b = reused.addressable_shards();
  for (std::size_t k = 0; k < a.size(); ++k)
    shared = shared && a[k].data.get().get() == b[k].data.get().get();
  say("local layout reused without copy: " + std::string(shared && a.size() == b.size() ? "yes" : "no"));
  // A local array laid out otherwise (on one device) is placed by slicing its value.
  auto on_one = am::device_put(local, am::local_devices()[0]);
  auto from_one = mh::host_local_array_to_global_array(on_one, flat, am::P("x"));
  say("local array on one device: " + describe(mh::process_allgather(from_one, true)));
  // Errors.
  attempt("none spec", [&] { mh::host_local_array_to_global_array(local, flat, am::none); });
  attempt("none in tree", [&] {
    mh::host_local_array_to_global_array(std::make_tuple(local), flat,
                                         std::make_tuple(std::optional<am::partition_spec>{}));
  });
  // Devices interleaved across processes: no process's devices are contiguous any more.
  std::vector<am::device> shuffled;
  for (std::int64_t d = 0; d < L; ++d)
    for (int q = 0; q < n; ++q)
      shuffled.push_back(am::devices()[static_cast<std::size_t>(q * L + d)]);
  am::mesh broken({static_cast<std::int64_t>(shuffled.size())}, shuffled, {"x"});
  attempt("not a subcube", [&] { mh::host_local_array_to_global_array(local, broken, am::P("x")); });
  say("host-local done");
}

void mismatch(int p) {
  attempt("mismatched shapes", [&] { mh::process_allgather(host_array::zeros({p == 1 ? 3 : 2})); });
  say("after mismatch: " + describe(mh::process_allgather(1)));
}

std::string ids(const std::vector<am::device>& devices) {
  std::string out;
  for (auto& d : devices)
    out += (out.empty() ? "" : " ") + std::to_string(d.id);
  return out;
}

std::string ids(const std::vector<int>& devices) {
  std::string out;
  for (int d : devices)
    out += (out.empty() ? "" : " ") + std::to_string(d);
  return out;
}

void live_devices(int p, int victim) {
  mh::live_devices(am::devices(), [&](const std::vector<am::device>& live) { say("first live: " + ids(live)); });
  say("first block passed");
  attempt("no devices", [&] { mh::live_devices({}, [](auto&) {}); });
  std::vector<am::device> others;
  for (auto& d : am::devices())
    if (d.process_index != p)
      others.push_back(d);
  attempt("no local devices", [&] { mh::live_devices(others, [](auto&) {}); });
  attempt("body throws", [&] {
    mh::live_devices(am::devices(), [&](auto&) {
      if (p == 1)
        throw am::value_error("the body's own error");
    });
    say("body throws: passed");
  });
  auto t0 = std::chrono::steady_clock::now();
  try {
    mh::live_devices(am::devices(), [&](const std::vector<am::device>& live) {
      say("second live: " + ids(live));
      if (p == victim)
        std::raise(SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    });
    say("second block passed");
  } catch (const am::process_failure_error& e) {
    say("second block failed devices: " + ids(e.failed_devices()));
    say("second block error: " + std::string(e.what()));
    say("second block failed after ms: "
        + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
                             .count()));
  }
  mh::live_devices(am::devices(), [&](const std::vector<am::device>& live) { say("third live: " + ids(live)); });
  say("third block passed");
}

void preempt(int p, int victim, int at, const std::string& mode) {
  for (std::int64_t step = 0; step < 1000; ++step) {
    if (mh::reached_preemption_sync_point(step)) {
      say("preemption sync point at step " + std::to_string(step));
      return;
    }
    if (p == victim && step == at)
      std::raise(SIGTERM);
    if (mode == "lockstep")
      mh::process_allgather(step);
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(2 * (p + 1)));
  }
  say("no sync point within 1000 steps");
}

/// The values the checkpoint scenarios save: w float32 (8, 4), b int64 (16,), s uint8 (3,), a step.
host_array checkpoint_w() { return host_array::arange(32, am::dtype::float32).reshape({8, 4}); }
host_array checkpoint_b() { return host_array::arange(0, 160, 10, am::dtype::int64); }
host_array checkpoint_s() { return host_array::from_vector(std::vector<std::uint8_t>{7, 8, 9}); }

void checkpoint_save(int n, const std::string& dir) {
  const auto L = static_cast<std::int64_t>(am::local_device_count());
  am::mesh grid({n, L}, am::devices(), {"p", "d"});
  am::mesh flat({static_cast<std::int64_t>(am::device_count())}, am::devices(), {"x"});
  auto tree = std::make_tuple(am::device_put(checkpoint_w(), am::make_named_sharding(grid, am::P("p", "d"))),
                              am::device_put(checkpoint_b(), am::make_named_sharding(flat, am::P("x"))),
                              am::device_put(checkpoint_s(), am::make_named_sharding(flat, am::P())),
                              std::int64_t{42});
  mh::save_checkpoint(dir, tree);
  say("checkpoint saved: " + std::string(mh::checkpoint_exists(dir) ? "complete" : "INCOMPLETE"));
}

void checkpoint_restore(int n, const std::string& dir) {
  const auto L = static_cast<std::int64_t>(am::local_device_count());
  am::mesh grid({n, L}, am::devices(), {"p", "d"});
  am::mesh flat({static_cast<std::int64_t>(am::device_count())}, am::devices(), {"x"});
  am::sharding_ptr w = am::make_named_sharding(grid, am::P("d", "p"));
  am::sharding_ptr b = am::make_named_sharding(flat, am::P());
  am::sharding_ptr s = am::make_named_sharding(grid, am::P());
  auto [rw, rb, rs, rstep] = mh::restore_checkpoint(dir, std::make_tuple(w, b, s, s));
  auto check = [&](const std::string& name, const am::array& x, const host_array& want) {
    host_array got = mh::process_allgather(x, true);
    say("restored " + name + ": " + (am::array_identical(got, want) ? "ok" : "WRONG " + describe(got)));
  };
  check("w", rw, checkpoint_w());
  check("b", rb, checkpoint_b());
  check("s", rs, checkpoint_s());
  check("step", rstep, host_array::scalar(std::int64_t{42}));
  say("w restored sharding: " + rw.sharding()->to_string());
}

void die_in_gather(int p, int victim) {
  auto t0 = std::chrono::steady_clock::now();
  try {
    for (int k = 0; k < 50; ++k) {
      if (p == victim && k == 3)
        std::raise(SIGKILL);
      mh::process_allgather(host_array::full({64}, k, am::dtype::int32));
    }
    say("gathers: all passed");
  } catch (const std::exception& e) {
    report(e);
    say("failed after ms: "
        + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
                             .count()));
  }
  attempt("later", [&] { mh::sync_global_devices("after the failure"); });
}

int run(int argc, char** argv) {
  std::string scenario = argc > 1 ? argv[1] : "broadcast";
  am::runtime rt;
  const int p = am::process_index(), n = am::process_count();
  say("process " + std::to_string(p) + " of " + std::to_string(n));
  if (scenario == "broadcast")
    broadcast(p, n);
  else if (scenario == "allgather")
    allgather(p, n);
  else if (scenario == "assert-equal")
    assert_equal(p);
  else if (scenario == "sync")
    sync(p);
  else if (scenario == "sync-without")
    sync_without(p, std::atoi(argv[2]));
  else if (scenario == "host-local")
    host_local(p, n);
  else if (scenario == "live-devices")
    live_devices(p, std::atoi(argv[2]));
  else if (scenario == "preempt")
    preempt(p, std::atoi(argv[2]), std::atoi(argv[3]), argv[4]);
  else if (scenario == "checkpoint-save")
    checkpoint_save(n, argv[2]);
  else if (scenario == "checkpoint-restore")
    checkpoint_restore(n, argv[2]);
  else if (scenario == "die-in-gather")
    die_in_gather(p, std::atoi(argv[2]));
  else if (scenario == "mismatch")
    mismatch(p);
  else
    throw am::value_error("unknown scenario " + scenario);
  say("done");
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
