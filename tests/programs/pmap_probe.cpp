// A program the pmap integration tests start alone or as every process of a cluster (`actormesh
// launch`): the seed's data-parallel linear regression under pmap over the first device of each
// process (2 local devices when alone), gradients pmean'd across the devices, printed to full
// precision so that runs can be compared bit for bit; every collective of pmap over the same
// devices, printed; and a process that dies in the middle of training.
//
//   pmap_probe train STEPS           trains STEPS steps; prints "w = <%.17g>  b = <%.17g>"
//   pmap_probe collectives           psum, pmean, pmax, pmin, all_gather (stacked, tiled, along
//                                    axis 1, of int32 and float32, over the devices reversed),
//                                    ppermute (a ring, partial), psum_scatter (tiled, stacked,
//                                    along dim 1),
//                                    axis_index over the devices; one line each
//   pmap_probe uneven                all_gather, ppermute, psum_scatter (along dims 0, 1, 2) and psum
//                                    over 4 devices that processes hold unevenly: 3 of process 0
//                                    then 1 of process 1 ("3+1"), and the same interleaved
//                                    ("interleaved": 0, 1, 0, 0); 4 local devices alone; one line
//                                    each, "<list> <collective>: values"
//   pmap_probe die-at P K            trains; process P kills itself (SIGKILL) at step K; the others
//                                    print the error that ends their step ("error <kind>: ...")
//   pmap_probe mismatch              process 1 psums a slice of another size than process 0's; both
//                                    print the error ("error <kind>: ...")
//   pmap_probe mixed KIND [uneven]   process 1 all_gathers (KIND gather), psum_scatters (KIND
//                                    scatter; scatter1 along dim 1) or ppermutes (permute: a
//                                    swap; ring: a ring) where process 0 psums, over the first
//                                    device of each process (uneven: the "3+1" devices); both
//                                    print the error
//   pmap_probe stage-die-at KIND P K all_gathers (KIND gather), psum_scatters (scatter) or
//                                    ppermutes (permute) step by
//                                    step; process P kills itself (SIGKILL) at step K; the others
//                                    print the error that ends their step
//   pmap_probe stall MS              one psum, then process 1 sleeps MS before the second; every
//                                    process prints "stall: first ok" and the second's result or
//                                    error ("error <kind>: ...")
//   pmap_probe effects               a pmap whose body psums and debug_prints its slice and the sum,
//                                    called twice over the mapped devices: each process prints
//                                    "effect slice <its slice> sum <sum>" for its own devices on
//                                    every call, then "effects call K: <results>" and "effects done"
//   pmap_probe threads ROUNDS        two threads at once, thread t psumming over the devices of local
//                                    ordinal t of every process, ROUNDS times each; prints
//                                    "threads: N correct of M" 
#include "actormesh.hpp"
#include "support/probe_output.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using am::array;
using am::testing::say;

/// The mapped devices: the first 2 local devices alone, else the first device of every process.
std::vector<am::device> mapped_devices() {
  std::vector<am::device> out;
  for (auto& d : am::devices())
    if (am::process_count() == 1 ? out.size() < 2 : d.local_ordinal == 0)
      out.push_back(d);
  return out;
}

/// `a` replicated over `devices`, readable on every process.
am::host_array gathered(const array& a, const std::vector<am::device>& devices) {
  am::mesh m(am::create_device_mesh({static_cast<std::int64_t>(devices.size())}, devices), {"d"});
  return am::device_put(a, am::make_named_sharding(m, am::P())).to_host();
}

std::string values(const am::host_array& h) {
  std::string out;
  for (double v : h.astype(am::dtype::float64).to_vector<double>())
    out += (out.empty() ? "" : " ") + std::to_string(v);
  return out;
}

/// Trains `steps` steps; process `die_process` raises SIGKILL before step `die_step` (-1: never).
void train(long steps, int die_process, long die_step) {
  auto devices = mapped_devices();
  auto n = static_cast<std::int64_t>(devices.size());
  auto loss_fn = [](const array& w, const array& b, const array& x, const array& y) {
    return am::mean(am::square(w * x + b - y));
  };
  auto value_and_grad_fn = am::value_and_grad(loss_fn, {0, 1});
  auto step = am::pmap([value_and_grad_fn](const array& w, const array& b, const array& x, const array& y) {
    auto [loss, g] = value_and_grad_fn(w, b, x, y);
    return std::make_tuple(am::pmean(loss, "devices"), am::pmean(g[0], "devices"), am::pmean(g[1], "devices"));
  }, "devices", {am::none, am::none, 0, 0}, {am::none}, devices);
  auto xh = am::host_array::arange(8.0, am::dtype::float64).reshape({n, -1});
  std::vector<double> yv;
  for (double x : xh.to_vector<double>())
    yv.push_back(3 * x + 2 + 0.25 * std::sin(7 * x)); // noisy, the same in every process
  auto x = am::device_put(xh, devices), y = am::device_put(am::host_array::from_vector(yv, xh.shape()), devices);
  am::mesh m(am::create_device_mesh({n}, devices), {"d"});
  auto replicated = am::make_named_sharding(m, am::P());
  auto w = am::device_put(am::host_array::scalar(2.0), replicated);
  auto b = am::device_put(am::host_array::scalar(1.0), replicated);
  double loss = 0;
  for (long s = 0; s < steps; ++s) {
    if (s == die_step && am::process_index() == die_process) {
      say("process " + std::to_string(die_process) + " dies at step " + std::to_string(s));
      std::raise(SIGKILL);
    }
    auto [l, dw, db] = step(w, b, x, y);
    w = w - dw * 0.02;
    b = b - db * 0.02;
    if (s + 1 == steps)
      loss = l.to_host().item<double>();
    else if (die_step >= 0)
      w.block_until_ready(); // step by step, so that the failure meets a step in flight
  }
  char line[160];
  std::snprintf(line, sizeof line, "w = %.17g  b = %.17g  loss = %.17g", w.to_host().item<double>(),
                b.to_host().item<double>(), loss);
  say(line);
}

void collectives() {
  auto devices = mapped_devices();
  auto n = static_cast<std::int64_t>(devices.size());
  auto xh = am::host_array::arange(1.0, 1.0 + 2 * n * n, 1.0, am::dtype::float64).reshape({n, 2 * n});
  auto x = am::device_put(xh, devices);
  auto show = [&](const char* name, auto f) {
    try {
      say(std::string(name) + ": " + values(gathered(am::pmap(f, "i", {0}, {0}, devices)(x), devices)));
    } catch (const std::exception& e) {
      am::testing::report(e);
    }
  };
  show("psum", [](const array& a) { return am::psum(a, "i"); });
  show("pmean", [](const array& a) { return am::pmean(a, "i"); });
  show("pmax", [](const array& a) { return am::pmax(a, "i"); });
  show("pmin", [](const array& a) { return am::pmin(a, "i"); });
  show("all_gather", [](const array& a) { return am::all_gather(a, "i"); });
  show("all_gather_tiled", [](const array& a) { return am::all_gather(a * 3.0, "i", 0, true); });
  show("all_gather_axis1", [](const array& a) { return am::all_gather(a, "i", 1) - 1.0; });
  show("all_gather_int32", [](const array& a) { return am::all_gather(am::astype(a, am::dtype::int32), "i"); });
  show("all_gather_float32", [](const array& a) { return am::all_gather(am::astype(a, am::dtype::float32), "i", 0, true); });
  // The devices the other way round: across processes, process 1's block comes first.
  std::vector<am::device> reversed(devices.rbegin(), devices.rend());
  try {
    auto gather = am::pmap([](const array& a) { return am::all_gather(a, "i", 0, true); }, "i", {0}, {am::none}, reversed);
    say("all_gather_reversed: " + values(gathered(gather(am::device_put(xh, reversed)), reversed)));
  } catch (const std::exception& e) {
    am::testing::report(e);
  }
  show("ppermute_partial", [](const array& a) { return am::ppermute(a, "i", {{0, 1}}) + 1.0; });
  show("psum_scatter_stacked", [n](const array& a) { return am::psum_scatter(am::reshape(a, {n, 2}), "i"); });
  show("ppermute", [n](const array& a) {
    std::vector<std::pair<int, int>> ring;
    for (int i = 0; i < n; ++i)
      ring.emplace_back(i, static_cast<int>((i + 1) % n));
    return am::ppermute(a, "i", ring);
  });
  show("psum_scatter", [](const array& a) { return am::psum_scatter(a, "i", 0, true); });
  show("psum_scatter_dim1", [n](const array& a) { return am::psum_scatter(am::reshape(a, {2, n}), "i", 1, true); });
  show("axis_index", [](const array& a) { return a * am::astype(am::axis_index("i"), a.dtype()); });
}

/// 4 devices held unevenly: alone the first 4 local devices; across processes process 0's first
/// 3 and process 1's first, in that order ("3+1") or as 0, 1, 0, 0 ("interleaved").
std::vector<am::device> uneven_devices(bool interleaved) {
  std::vector<am::device> zero, one;
  for (auto& d : am::devices())
    (am::process_count() > 1 && d.process_index == 1 ? one : zero).push_back(d);
  if (am::process_count() == 1) {
    one.assign(zero.begin() + 3, zero.begin() + 4);
    zero.resize(3);
  }
  if (zero.size() < 3 || one.empty())
    throw am::value_error("uneven: needs 3 devices in process 0 and 1 in process 1 (or 4 alone)");
  if (interleaved)
    return {zero[0], one[0], zero[1], zero[2]};
  return {zero[0], zero[1], zero[2], one[0]};
}

void uneven() {
  for (bool interleaved : {false, true}) {
    auto devices = uneven_devices(interleaved);
    std::string list = interleaved ? "interleaved " : "3+1 ";
    auto xh = am::host_array::arange(1.0, 129.0, 1.0, am::dtype::float64).reshape({4, 4, 4, 2}); // slices [4, 4, 2]
    auto x = am::device_put(xh, devices);
    auto show = [&](const char* name, auto f) {
      try {
        say(list + name + ": " + values(gathered(am::pmap(f, "i", {0}, {0}, devices)(x), devices)));
      } catch (const std::exception& e) {
        am::testing::report(e);
      }
    };
    show("psum", [](const array& a) { return am::psum(a, "i"); });
    show("all_gather", [](const array& a) { return am::all_gather(a, "i"); });
    show("all_gather_tiled_axis1", [](const array& a) { return am::all_gather(a * 2.0, "i", 1, true); });
    show("ppermute_ring", [](const array& a) { return am::ppermute(a, "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}}); });
    show("ppermute_partial", [](const array& a) { return am::ppermute(a, "i", {{3, 0}, {0, 2}}) + 1.0; });
    show("psum_scatter", [](const array& a) { return am::psum_scatter(a, "i", 0, true); });
    show("psum_scatter_stacked", [](const array& a) { return am::psum_scatter(a, "i"); });
    show("psum_scatter_dim1", [](const array& a) { return am::psum_scatter(a, "i", 1, true); });
    show("psum_scatter_dim1_stacked", [](const array& a) { return am::psum_scatter(a - 1.0, "i", 1); });
    show("psum_scatter_dim2", [](const array& a) {
      return am::psum_scatter(am::reshape(a, {2, 2, 8}), "i", 2, true);
    });
  }
  // No barrier at the end: process 0 may read its replicas of the last result before its shards
  // reached process 1, and stopping then still sends them (runtime_impl::add_stop_drain).
}

/// Every process psums slices of 4 float64 except process 1, whose are 5 long (a program bug:
/// the processes do not make the same call).
void mismatch() {
  auto devices = mapped_devices();
  auto n = static_cast<std::int64_t>(devices.size());
  std::int64_t width = am::process_index() == 1 ? 5 : 4;
  auto x = am::device_put(am::host_array::full({n, width}, 1.0, am::dtype::float64), devices);
  auto summed = am::pmap([](const array& a) { return am::psum(a, "i"); }, "i", {0}, {am::none}, devices)(x);
  say("psum: " + values(summed.to_host()));
}

/// Both processes map a square array of the same shape, process 1 along another axis (in_axes 1):
/// without the agreement check it would compute on another region of the array, silently.
void mismatch_axes() {
  auto devices = mapped_devices();
  auto n = static_cast<std::int64_t>(devices.size());
  auto x = am::device_put(am::host_array::full({n, n}, 1.0, am::dtype::float64), devices);
  am::axis_spec axis = am::process_index() == 1 ? am::axis_spec(1) : am::axis_spec(0);
  auto summed = am::pmap([](const array& a) { return am::psum(a, "i"); }, "i", {axis}, {am::none}, devices)(x);
  say("psum: " + values(summed.to_host()));
}

/// The stage collective `kind` names ("gather": a tiled all_gather, "scatter": a tiled
/// psum_scatter, "scatter1": one along dim 1 of the slice as [2, size / 2], "permute": a ppermute
/// swapping devices 0 and 1, "ring": one over every device; else a psum) on `a` (over `n` devices).
array stage_collective(const std::string& kind, const array& a, std::int64_t n = 2) {
  if (kind == "gather")
    return am::all_gather(a, "i", 0, true);
  if (kind == "permute")
    return am::ppermute(a, "i", {{0, 1}, {1, 0}});
  if (kind == "ring") {
    std::vector<std::pair<int, int>> ring;
    for (int i = 0; i < n; ++i)
      ring.emplace_back(i, static_cast<int>((i + 1) % n));
    return am::ppermute(a, "i", ring);
  }
  if (kind == "scatter1")
    return am::reshape(am::psum_scatter(am::reshape(a, {2, a.shape()[0] / 2}), "i", 1, true), {-1});
  return kind == "scatter" ? am::psum_scatter(a, "i", 0, true) : am::psum(a, "i");
}

/// Process 0 psums where process 1 issues the collective `kind` names on the same slices (a
/// program bug: the processes do not issue the same collectives).
void mixed(const std::string& kind, bool on_uneven) {
  auto devices = on_uneven ? uneven_devices(false) : mapped_devices();
  auto n = static_cast<std::int64_t>(devices.size());
  auto x = am::device_put(am::host_array::full({n, 4}, 1.0, am::dtype::float64), devices);
  auto mine = am::process_index() == 1 ? kind : std::string("psum");
  auto f = am::pmap([mine, n](const array& a) { return stage_collective(mine, a, n); }, "i", {0}, {0}, devices);
  f(x).block_until_ready(); // the local shards: their stage's error
  say("mixed: done");
}

/// The collective `kind` names, step by step; process `die_process` raises SIGKILL before step
/// `die_step`.
void stages_until_death(const std::string& kind, int die_process, long die_step) {
  auto devices = mapped_devices();
  auto n = static_cast<std::int64_t>(devices.size());
  auto f = am::pmap([kind](const array& a) { return stage_collective(kind, a) * 2.0; }, "i", {0}, {0}, devices);
  auto x = am::device_put(am::host_array::full({n, 4}, 1.0, am::dtype::float64), devices);
  for (long s = 0; s < 1000000; ++s) {
    if (s == die_step && am::process_index() == die_process) {
      say("process " + std::to_string(die_process) + " dies at step " + std::to_string(s));
      std::raise(SIGKILL);
    }
    f(x).block_until_ready();
  }
}

/// A psum everywhere, then process 1 sleeps `ms` before the next one: the others' stage waits for
/// it until the collective timeout, then fails naming it.
void stall(long ms) {
  auto devices = mapped_devices();
  auto n = static_cast<std::int64_t>(devices.size());
  auto f = am::pmap([](const array& a) { return am::psum(a, "i"); }, "i", {0}, {am::none}, devices);
  auto x = am::device_put(am::host_array::full({n, 4}, 1.0, am::dtype::float64), devices);
  f(x).block_until_ready();
  say("stall: first ok");
  if (am::process_index() == 1)
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  say("psum: " + values(f(x).to_host()));
}

/// Two threads, each with its own device list (local ordinal t of every process), psumming at
/// once: each list has its own stage worker and communicator, so the threads need no order
/// between them; every result is checked.
void threads(long rounds) {
  std::atomic<long> correct{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 2; ++t)
    pool.emplace_back([&, t] {
      std::vector<am::device> devices;
      for (auto& d : am::devices())
        if (d.local_ordinal == t)
          devices.push_back(d);
      auto n = static_cast<std::int64_t>(devices.size());
      auto f = am::pmap([](const array& a) { return am::psum(a, "i"); }, "i", {0}, {am::none}, devices);
      try {
        for (long r = 0; r < rounds; ++r) {
          double base = t * 1000.0 + static_cast<double>(r) * 10.0;
          std::vector<double> v;
          for (std::int64_t i = 0; i < n; ++i)
            for (int j = 0; j < 3; ++j)
              v.push_back(base + static_cast<double>(i));
          auto got = f(am::device_put(am::host_array::from_vector(v, {n, 3}), devices)).to_host();
          double expected = static_cast<double>(n) * base + static_cast<double>(n * (n - 1) / 2);
          bool ok = true;
          for (double x : got.to_vector<double>())
            ok = ok && x == expected;
          correct += ok ? 1 : 0;
        }
      } catch (const std::exception& e) {
        am::testing::report(e);
      }
    });
  for (auto& th : pool)
    th.join();
  say("threads: " + std::to_string(correct.load()) + " correct of " + std::to_string(2 * rounds));
}

void effects() {
  auto devices = mapped_devices();
  auto n = static_cast<std::int64_t>(devices.size());
  auto x = am::device_put(am::host_array::arange(1.0, 1.0 + 2 * n, 1.0, am::dtype::float32).reshape({n, 2}), devices);
  auto f = am::pmap(
    [](const array& a) {
      auto s = am::psum(a, "i");
      am::debug_print("effect slice {} sum {}", a, s);
      return s * 2.0f;
    },
    "i", {0}, {0}, devices);
  for (int call = 0; call < 2; ++call)
    say("effects call " + std::to_string(call) + ": " + values(gathered(f(x), devices)));
  am::effects_barrier();
  say("effects done");
}

} // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  try {
    am::runtime rt(argc, argv);
    if (mode == "train" && argc > 2)
      train(std::atol(argv[2]), -1, -1);
    else if (mode == "collectives")
      collectives();
    else if (mode == "mismatch")
      mismatch();
    else if (mode == "mismatch-axes")
      mismatch_axes();
    else if (mode == "uneven")
      uneven();
    else if (mode == "mixed" && argc > 2)
      mixed(argv[2], argc > 3 && std::string(argv[3]) == "uneven");
    else if (mode == "stage-die-at" && argc > 4)
      stages_until_death(argv[2], std::atoi(argv[3]), std::atol(argv[4]));
    else if (mode == "stall" && argc > 2)
      stall(std::atol(argv[2]));
    else if (mode == "effects")
      effects();
    else if (mode == "threads" && argc > 2)
      threads(std::atol(argv[2]));
    else if (mode == "die-at" && argc > 3)
      train(1000000, std::atoi(argv[2]), std::atol(argv[3]));
    else {
      std::fprintf(stderr, "usage: pmap_probe train STEPS | collectives | uneven | die-at P K | mismatch | mismatch-axes | mixed KIND [uneven]"
                           " | stage-die-at KIND P K"
                           " | stall MS | effects | threads ROUNDS\n");
      return 2;
    }
  } catch (const std::exception& e) {
    am::testing::report(e);
    return 1;
  }
  return 0;
}
