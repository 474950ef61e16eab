// The pmap tour (seed 004, "combining pmap with other transformations") in C++: complex_computation
// under pmap (jit implied), the data-parallel linear regression whose gradients are pmean'd across
// devices, trained to w close to 3 and b close to 2, and vmap inside pmap. Every step is checked;
// the exit status is 1 when a check fails, 2 on an error. In one process it maps over 2 local
// devices; under `actormesh launch -n 2` over the first device of each process (every process runs
// the same steps, its own device's programs, and the collectives cross the processes), with the
// same results.
//
//   ./build/demos/pmap_tour [--steps N] [--am-* runtime flags]
//   ./build/tools/actormesh launch -n 2 --cpu-devices 4 -- ./build/demos/pmap_tour
#include "demos/support/demo_command_line.hpp"
#include <actormesh.hpp>
#include "tools/progress_display.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

using am::array;

int checks = 0, failures = 0;

void check(bool ok, const std::string& what) {
  ++checks;
  if (!ok) {
    ++failures;
    fmt::print("  CHECK FAILED: {}\n", what);
  }
}

std::string shape_text(const am::shape_t& s) {
  std::string out = "(";
  for (std::size_t k = 0; k < s.size(); ++k)
    out += (k ? ", " : "") + std::to_string(s[k]);
  return out + (s.size() == 1 ? ",)" : ")");
}

double max_abs_diff(const am::host_array& a, const am::host_array& b) {
  auto x = a.astype(am::dtype::float64).to_vector<double>(), y = b.astype(am::dtype::float64).to_vector<double>();
  double d = x.size() == y.size() ? 0.0 : INFINITY;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
    d = std::max(d, std::abs(x[i] - y[i]));
  return d;
}

/// `a` replicated on every device of `devices`, so that every process can read it.
array everywhere(const array& a, const std::vector<am::device>& devices) {
  am::mesh m(am::create_device_mesh({static_cast<std::int64_t>(devices.size())}, devices), {"d"});
  return am::device_put(a, am::make_named_sharding(m, am::P()));
}

/// `data` whole on every device of `devices`.
array everywhere(const am::host_array& data, const std::vector<am::device>& devices) {
  am::mesh m(am::create_device_mesh({static_cast<std::int64_t>(devices.size())}, devices), {"d"});
  return am::device_put(data, am::make_named_sharding(m, am::P()));
}

/// The number of `devices` this process owns.
std::size_t owned(const std::vector<am::device>& devices) {
  std::size_t n = 0;
  for (auto& d : devices)
    n += d.process_index == am::process_index() ? 1 : 0;
  return n;
}

/// The seed's function that benefits from jit: one fused loop per device under pmap.
array complex_computation(const array& x) {
  auto y = am::sin(x) * am::cos(x);
  auto z = am::tanh(y) + am::sqrt(am::abs(x));
  return z * 2.0;
}

void pmap_and_jit(const std::vector<am::device>& devices) {
  fmt::print("\n== pmap with jit\nusing {} devices:", devices.size());
  for (auto& d : devices)
    fmt::print(" {}", am::to_string(d));
  fmt::print("\n");
  auto pmap_complex_computation = am::pmap(complex_computation, "", {0}, {0}, devices);
  auto data = am::host_array::arange(8.0, am::dtype::float64).reshape({static_cast<std::int64_t>(devices.size()), -1});
  auto sharded_data = am::device_put(data, devices);
  auto start = std::chrono::steady_clock::now();
  auto result = pmap_complex_computation(sharded_data);
  result.block_until_ready();
  auto first = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  start = std::chrono::steady_clock::now();
  pmap_complex_computation(sharded_data).block_until_ready();
  auto second = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("pmap time: {:.6f} s (first call, traced), {:.6f} s (cached)\n", first, second);
  fmt::print("result shape: {}\n", shape_text(result.shape()));
  check(result.shape() == am::shape_t{2, 4}, "result shape (2, 4)");
  check(result.addressable_shards().size() == owned(devices), "one shard per device");
  auto single = complex_computation(everywhere(data, devices)).to_host();
  auto whole = everywhere(result, devices).to_host();
  check(max_abs_diff(whole, single) < 1e-12, "pmap equals the same computation on one device");
  auto jit_then_pmap = am::pmap(am::jit(complex_computation), "", {0}, {0}, devices);
  check(max_abs_diff(everywhere(jit_then_pmap(sharded_data), devices).to_host(), whole) == 0, "pmap(jit(f)) == pmap(f)");
}

void pmap_and_grad(const std::vector<am::device>& devices, int steps) {
  fmt::print("\n== pmap with grad: data-parallel training\n");
  auto predict = [](const array& w, const array& b, const array& x) { return w * x + b; };
  auto loss_fn = [predict](const array& w, const array& b, const array& x_batch, const array& y_batch) {
    auto error = predict(w, b, x_batch) - y_batch;
    return am::mean(am::square(error));
  };
  auto value_and_grad_fn = am::value_and_grad(loss_fn, {0, 1});
  auto parallel_update_step = [value_and_grad_fn](const array& w, const array& b, const array& x, const array& y) {
    auto [loss, grads] = value_and_grad_fn(w, b, x, y);
    auto avg_dw = am::pmean(grads[0], "devices");
    auto avg_db = am::pmean(grads[1], "devices");
    auto avg_loss = am::pmean(loss, "devices");
    return std::make_tuple(avg_loss, avg_dw, avg_db);
  };
  // Parameters replicated (in_axes none), data split along dim 0; results the same everywhere.
  auto pmap_update_step =
    am::pmap(parallel_update_step, "devices", {am::none, am::none, 0, 0}, {am::none}, devices);
  auto n = static_cast<std::int64_t>(devices.size());
  auto x_data = am::host_array::arange(8.0, am::dtype::float64).reshape({n, -1});
  std::mt19937 rng(0);
  std::normal_distribution<double> noise(0.0, 0.5);
  auto xv = x_data.to_vector<double>();
  std::vector<double> yv;
  for (double x : xv)
    yv.push_back(3 * x + 2 + noise(rng));
  auto y_data = am::host_array::from_vector(yv, x_data.shape());
  auto sharded_x = am::device_put(x_data, devices);
  auto sharded_y = am::device_put(y_data, devices);
  auto w = everywhere(am::host_array::scalar(2.0), devices);
  auto b = everywhere(am::host_array::scalar(1.0), devices);
  auto [avg_loss, avg_dw, avg_db] = pmap_update_step(w, b, sharded_x, sharded_y);
  fmt::print("average loss across devices: {:.4f}\n", avg_loss.to_host().item<double>());
  fmt::print("average gradients (dw, db): ({:.4f}, {:.4f})\n", avg_dw.to_host().item<double>(),
             avg_db.to_host().item<double>());
  // The averaged gradient is the gradient over the whole batch.
  auto whole = value_and_grad_fn(w, b, everywhere(x_data.reshape({-1}), devices),
                                 everywhere(y_data.reshape({-1}), devices));
  check(std::abs(avg_dw.to_host().item<double>() - whole.second[0].to_host().item<double>()) < 1e-9,
        "pmean'd dw equals the whole batch's dw");
  const double learning_rate = 0.02;
  double loss = 0;
  // A bar on a terminal, a plain line every 10% elsewhere (tools/progress_display.hpp).
  am::tools::progress_display progress(std::cout, am::tools::is_terminal(std::cout), "steps");
  for (int step = 1; step <= steps; ++step) {
    auto [l, dw, db] = pmap_update_step(w, b, sharded_x, sharded_y);
    w = w - dw * learning_rate;
    b = b - db * learning_rate;
    if (step % 50 == 0 || step == steps) {
      loss = l.to_host().item<double>();
      progress.update(step, steps);
    }
  }
  progress.finish();
  fmt::print("loss after {} steps: {:.4f}\n", steps, loss);
  auto wf = w.to_host().item<double>(), bf = b.to_host().item<double>();
  check(std::abs(wf - 3) < 0.2, "w close to 3");
  check(std::abs(bf - 2) < 0.6, "b close to 2");
  fmt::print("w = {:.4f}  b = {:.4f}\n", wf, bf);
}

void pmap_and_vmap(const std::vector<am::device>& devices) {
  fmt::print("\n== pmap with vmap\n");
  auto process_item = [](const array& item) { return am::tanh(item) * 2.0; };
  auto process_batch_of_items = [process_item](const array& batch) {
    auto vectorized_processor = am::vmap(process_item);
    return vectorized_processor(batch);
  };
  auto pmap_process_batches = am::pmap(process_batch_of_items, "", {0}, {0}, devices);
  auto n = static_cast<std::int64_t>(devices.size());
  auto data = am::host_array::arange(static_cast<std::int64_t>(n * 3 * 4), am::dtype::float64)
                .reshape({n, 3, 4});
  auto sharded_data = am::device_put(data, devices);
  auto result = pmap_process_batches(sharded_data);
  result.block_until_ready();
  fmt::print("input shape per device: {}\n", shape_text({3, 4}));
  fmt::print("output shape: {}\n", shape_text(result.shape()));
  check(result.shape() == am::shape_t{2, 3, 4}, "output shape (2, 3, 4)");
  check(max_abs_diff(everywhere(result, devices).to_host(), process_item(everywhere(data, devices)).to_host()) < 1e-12,
        "pmap(vmap) equals the item function on the whole array");
}

int run(int argc, char** argv) {
  int steps = 1000;
  am::demo::command_line cli("pmap_tour", "pmap with jit, grad and vmap (seed 004) in C++, on 2 devices "
                                          "(in one process, or under `actormesh launch -n 2`)");
  cli.add_count("--steps", steps, "gradient-descent steps of the linear regression", 1);
  if (auto status = cli.parse(argc, argv))
    return *status;
  am::runtime rt(argc, argv);
  // One process: its first 2 devices. Several: the first device of each process (2 processes).
  // Every pmap names them (by default pmap takes the first devices of the cluster, which are all
  // process 0's).
  std::vector<am::device> devices;
  for (auto& d : am::devices())
    if (am::process_count() == 1 ? devices.size() < 2 : d.local_ordinal == 0)
      devices.push_back(d);
  if (devices.size() != 2) {
    fmt::print(stderr, "error: the tour needs 2 devices (2 in one process, or 2 processes), found {}\n",
               devices.size());
    return 2;
  }
  fmt::print("actormesh pmap tour: {} of {} devices, {} process(es)\n", devices.size(), am::devices().size(),
             am::process_count());
  pmap_and_jit(devices);
  pmap_and_grad(devices, steps);
  pmap_and_vmap(devices);
  if (failures == 0)
    fmt::print("\nall {} checks passed\n", checks);
  else
    fmt::print("\n{} of {} checks FAILED\n", failures, checks);
  return failures == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
}
