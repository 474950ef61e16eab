// The sharding tour (seed 001, JAX's "Distributed arrays and automatic parallelization") in C++ on 8
// virtual CPU devices: device_put with PositionalSharding and NamedSharding, the pictures of every
// layout (ours, and relabelled as the seed's TPU v3-8 drew them), computation following sharding, jit,
// and the timing of sin on one device versus eight. Every step is checked; the exit status is 1 when a
// check fails, 2 on an error.
//
//   ./build/demos/sharding_tour [--quick] [--am-* runtime flags]
//
// --quick uses 1024x1024 arrays instead of 8192x8192 (the pictures are the same: they depend only on
// the ratio of the dimensions).
#include "demos/support/demo_command_line.hpp"
#include <actormesh.hpp>

#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/jit.hpp"
#include "actormesh/sharding/named_sharding.hpp"
#include "actormesh/sharding/ops.hpp"
#include "actormesh/sharding/positional_sharding.hpp"
#include "actormesh/sharding/random.hpp"
#include "actormesh/sharding/reductions.hpp"
#include "actormesh/sharding/single_device_sharding.hpp"
#include "actormesh/sharding/visualize.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

/// The seed's device order: mesh_utils.create_device_mesh((8,)) on a TPU v3-8.
const std::vector<int> seed_tpu_order{0, 1, 2, 3, 6, 7, 4, 5};

/// Options that relabel our plain-order CPU pictures as the seed's TPU pictures.
am::visualize_options seed_tpu_labels() {
  return am::visualize_options{.platform = "TPU", .device_ids = seed_tpu_order, .use_color = am::stdout_has_colour()};
}

/// JAX's picture: coloured on a colour terminal, plain when piped.
am::visualize_options on_this_terminal() {
  return am::visualize_options{.use_color = am::stdout_has_colour()};
}

/// The tour's state: sizes, devices and the tally of checks.
struct tour {
  bool quick = false;             ///< 1024x1024 instead of 8192x8192
  std::int64_t n = 8192;          ///< arrays are n x n float32
  std::vector<am::device> cpus;   ///< the 8 virtual CPU devices, by id
  int checks = 0;                 ///< checks made
  int failures = 0;               ///< checks failed

  /// Prints a section header.
  void header(const std::string& title) const {
    fmt::print("\n==== {} ====\n\n", title);
  }

  /// Records a check and prints its outcome.
  void check(bool ok, const std::string& what) {
    ++checks;
    if (!ok)
      ++failures;
    fmt::print("  [{}] {}\n", ok ? "ok" : "FAILED", what);
  }

  /// Prints the picture of `a`; with `seed_picture`, also the one relabelled as in the seed.
  void show(const std::string& code, const am::array& a, bool seed_picture) const {
    fmt::print(">>> visualize_array_sharding({})\n{}", code, am::visualize_array_sharding(a, on_this_terminal()));
    if (seed_picture)
      fmt::print("as the seed drew it on TPUs (device order 0,1,2,3,6,7,4,5):\n{}",
                 am::visualize_array_sharding(a, seed_tpu_labels()));
  }
};

/// `(8192, 8192)`.
std::string shape_text(const std::vector<std::int64_t>& shape) { return am::shape_to_string(shape); }

/// The seed's is_congruent: same rank, and every sharding extent divides the array's.
bool is_congruent(const std::vector<std::int64_t>& x_shape, const std::vector<std::int64_t>& sharding_shape) {
  if (x_shape.size() != sharding_shape.size())
    return false;
  for (std::size_t i = 0; i < x_shape.size(); ++i)
    if (x_shape[i] % sharding_shape[i] != 0)
      return false;
  return true;
}

/// True when every shard of `a` sits on the device, block and replica id that `s` gives it.
bool placed_as(const am::array& a, const am::sharding& s) {
  if (!a.sharding()->is_equivalent_to(s, a.shape().size()))
    return false;
  const auto want = s.shard_placements(a.shape());
  const auto& got = a.addressable_shards();
  if (want.size() != got.size())
    return false;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i].device != want[i].device || got[i].index != want[i].index || got[i].replica_id != want[i].replica_id)
      return false;
  return true;
}

/// device_put(x, s) with its checks: the layout is `s`'s and the values are x's.
am::array put(tour& t, const am::array& x, const am::host_array& x_host, const am::sharding_ptr& s) {
  auto y = am::device_put(x, s);
  y.block_until_ready();
  t.check(placed_as(y, *s), "every shard is on the device, block and replica id the sharding gives it");
  t.check(am::array_identical(y.to_host(), x_host), "device_put kept the values");
  return y;
}

/// Milliseconds per call of `f`: the median of `runs` calls after one warm-up call.
double median_ms(const std::function<void()>& f, int runs) {
  f();
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// True when |a - b| <= atol + rtol * |b| for every `stride`-th element of two float32 arrays.
bool close_sampled(const am::host_array& a, const am::host_array& b, double rtol, double atol, std::int64_t stride) {
  if (a.shape() != b.shape() || a.dtype() != am::dtype::float32 || b.dtype() != am::dtype::float32)
    return false;
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  for (std::int64_t i = 0; i < a.size(); i += stride) {
    const double d = std::abs(static_cast<double>(pa[i]) - pb[i]);
    if (!(d <= atol + rtol * std::abs(static_cast<double>(pb[i]))))
      return false;
  }
  return true;
}

// ---- 1. Introduction and a quick example ---------------------------------------------------------

void introduction(tour& t) {
  t.header("1. Introduction and a quick example");
  fmt::print(">>> sharding = PositionalSharding(create_device_mesh((8,)))\n");
  am::positional_sharding sharding(am::create_device_mesh({8}, t.cpus));
  fmt::print(">>> x = normal(random_key(0), {})        # on one device, like JAX's default\n",
             shape_text({t.n, t.n}));
  auto x = am::normal(am::random_key(0), {t.n, t.n}, am::make_single_device_sharding(t.cpus[0]));
  fmt::print(">>> y = device_put(x, sharding.reshape(4, 2))\n");
  auto y = am::device_put(x, am::share(sharding.reshape({4, 2})));
  t.show("y", y, true);
  fmt::print(">>> z = sin(y)\n");
  auto z = am::sin(y);
  t.show("z", z, true);
  t.check(z.sharding()->is_equivalent_to(*y.sharding(), 2), "sin(y) is laid out like y");
  const auto on_one = am::sin(x).to_host();
  t.check(am::allclose(z.to_host(), on_one, 1e-6, 1e-6),
          "sin on 8 devices equals sin on one device (rtol 1e-6, atol 1e-6)");
  fmt::print("(the timing of sin(x) against sin(y) is in section 6)\n");
}

// ---- 2. Sharding basics and PositionalSharding --------------------------------------------------

void positional(tour& t) {
  t.header("2. Sharding basics, and the PositionalSharding subclass");
  fmt::print(">>> x = normal(random_key(0), {})\n", shape_text({t.n, t.n}));
  auto x = am::normal(am::random_key(0), {t.n, t.n}, am::make_single_device_sharding(t.cpus[0]));
  const auto x_host = x.to_host();
  t.show("x", x, true);

  fmt::print(">>> devices = create_device_mesh((8,))\n>>> sharding = PositionalSharding(devices)\n");
  am::positional_sharding sharding(am::create_device_mesh({8}, t.cpus));
  fmt::print(">>> x = device_put(x, sharding.reshape(8, 1))\n");
  auto x8 = put(t, x, x_host, am::share(sharding.reshape({8, 1})));
  t.show("x", x8, true);
  x8.delete_();

  fmt::print(">>> sharding\n{}\n", sharding.to_string());
  fmt::print("(the seed's TPU v3-8 listed {{TPU 0}} {{TPU 1}} {{TPU 2}} {{TPU 3}} {{TPU 6}} {{TPU 7}} {{TPU 4}} "
             "{{TPU 5}}: its mesh follows the torus; CPU devices have none, so ours are in plain order)\n");
  fmt::print(">>> sharding.reshape(8, 1)\n{}\n", sharding.reshape({8, 1}).to_string());
  fmt::print(">>> sharding.reshape(4, 2)\n{}\n", sharding.reshape({4, 2}).to_string());
  fmt::print(">>> is_congruent({}, (4, 2)) -> {}\n", shape_text(x.shape()),
             is_congruent(x.shape(), {4, 2}) ? "True" : "False");
  fmt::print(">>> is_congruent({}, (3, 2)) -> {}\n\n", shape_text(x.shape()),
             is_congruent(x.shape(), {3, 2}) ? "True" : "False");

  const auto s42 = sharding.reshape({4, 2});
  fmt::print(">>> sharding = sharding.reshape(4, 2)\n>>> y = device_put(x, sharding)\n");
  t.show("y", put(t, x, x_host, am::share(s42)), true);

  const auto s18 = sharding.reshape({1, 8});
  fmt::print(">>> sharding = sharding.reshape(1, 8)\n{}\n>>> y = device_put(x, sharding)\n", s18.to_string());
  t.show("y", put(t, x, x_host, am::share(s18)), true);

  fmt::print(">>> sharding = sharding.reshape(4, 2)\n>>> sharding.replicate(axis=0, keepdims=True)\n{}\n",
             s42.replicate(0, true).to_string());
  fmt::print(">>> y = device_put(x, sharding.replicate(axis=0, keepdims=True))\n");
  t.show("y", put(t, x, x_host, am::share(s42.replicate(0, true))), true);

  fmt::print(">>> sharding.replicate(0).shape, sharding.replicate(1).shape\n{} {}\n",
             shape_text(s42.replicate(0).shape()), shape_text(s42.replicate(1).shape()));
  fmt::print(">>> y = device_put(x, sharding.replicate(1))\n");
  t.show("y", put(t, x, x_host, am::share(s42.replicate(1))), true);
}

// ---- 3. NamedSharding ----------------------------------------------------------------------------

void named(tour& t) {
  t.header("3. NamedSharding gives a way to express shardings with names");
  auto x = am::normal(am::random_key(0), {t.n, t.n}, am::make_single_device_sharding(t.cpus[0]));
  const auto x_host = x.to_host();
  fmt::print(">>> mesh = Mesh(create_device_mesh((4, 2)), axis_names=('a', 'b'))\n");
  const am::mesh mesh(am::create_device_mesh({4, 2}, t.cpus), {"a", "b"});
  fmt::print("{}\n", mesh.to_string());
  const auto mesh_sharding = [&](const am::partition_spec& spec) { return am::make_named_sharding(mesh, spec); };

  struct example {
    const char* code;
    am::partition_spec spec;
    bool in_seed;
  };
  const std::vector<example> examples{
    {"P('a', 'b')", am::P("a", "b"), true},
    {"P('b', 'a')", am::P("b", "a"), true},
    {"P('a', None)", am::P("a", am::none), true},
    {"P('a')", am::P("a"), false},
    {"P(None, 'b')", am::P(am::none, "b"), true},
    {"P(None, 'a')", am::P(am::none, "a"), true},
    {"P(('a', 'b'), None)", am::P(am::spec_entry{"a", "b"}, am::none), true},
    {"P()", am::P(), false},
  };
  for (const auto& e : examples) {
    fmt::print(">>> y = device_put(x, mesh_sharding({}))\n", e.code);
    t.show("y", put(t, x, x_host, mesh_sharding(e.spec)), e.in_seed);
  }

  fmt::print(">>> y = device_put(x, mesh_sharding(P('a', None))); for s in y.addressable_shards: ...\n");
  const auto rows = put(t, x, x_host, mesh_sharding(am::P("a", am::none)));
  for (const auto& s : rows.addressable_shards())
    fmt::print("  {:<16} index {:<22} replica_id {}\n", am::to_string(s.device), am::to_string(s.index),
               s.replica_id);

  // The PositionalSharding forms of the same layouts (REFERENCE.md).
  const auto p42 = am::positional_sharding(am::create_device_mesh({8}, t.cpus)).reshape({4, 2});
  struct pair {
    const char* text;
    am::positional_sharding p;
    am::partition_spec spec;
  };
  const std::vector<pair> pairs{
    {"reshape(4, 2) is P('a', 'b')", p42, am::P("a", "b")},
    {"replicate(1) is P('a')", p42.replicate(1), am::P("a")},
    {"replicate(0) is P(None, 'b')", p42.replicate(0), am::P(am::none, "b")},
    {"reshape(8, 1) is P(('a', 'b'))", p42.reshape({8, 1}), am::P(am::spec_entry{"a", "b"})},
    {"replicate() is P()", p42.replicate(), am::P()},
  };
  fmt::print("\nPositionalSharding and NamedSharding describe the same layouts:\n");
  for (const auto& p : pairs)
    t.check(p.p.is_equivalent_to(am::named_sharding(mesh, p.spec), 2), p.text);
}

// ---- 4. Computation follows sharding -------------------------------------------------------------

void computation(tour& t) {
  t.header("4. Computation follows data sharding");
  const am::mesh mesh(am::create_device_mesh({4, 2}, t.cpus), {"a", "b"});
  auto y = am::normal(am::random_key(0), {t.n, t.n}, am::make_named_sharding(mesh, am::P("a", "b")));
  const auto y_host = y.to_host();
  fmt::print(">>> y = normal(random_key(0), {}, NamedSharding(mesh, P('a', 'b')))\n>>> z = sin(y)\n",
             shape_text(y.shape()));
  auto z = am::sin(y);
  t.show("z", z, true);
  t.check(placed_as(z, *y.sharding()), "sin(y) keeps y's sharding");
  const auto z_host = z.to_host();
  auto reference = am::host_array::empty(y.shape(), am::dtype::float32);
  {
    const float* in = y_host.data<float>();
    float* out = reference.data<float>();
    for (std::int64_t i = 0; i < y.size(); ++i)
      out[i] = std::sin(in[i]);
  }
  t.check(close_sampled(z_host, reference, 0.0, 2e-6, 1), "sin(y) equals std::sin of every element (atol 2e-6)");

  fmt::print("\nOperands with different shardings: the result takes the first operand's that is not replicated.\n");
  const auto by_rows = am::device_put(y, am::make_named_sharding(mesh, am::P("a")));
  const auto by_cols = am::device_put(y, am::make_named_sharding(mesh, am::P(am::none, "b")));
  fmt::print(">>> w = device_put(y, P('a')) + device_put(y, P(None, 'b'))\n");
  const auto w = by_rows + by_cols;
  t.show("w", w, false);
  t.check(w.sharding()->is_equivalent_to(*by_rows.sharding(), 2), "w is laid out like the first operand, P('a')");
  t.check(am::allclose(w.to_host(), (y * 2.0).to_host(), 0.0, 0.0), "w equals 2 * y");

  fmt::print("\nReductions: each device reduces its block, then the partial results are combined.\n");
  fmt::print(">>> mean(square(z))\n");
  const double mean_sq = am::mean(am::square(z)).to_host().item<double>();
  double ref = 0;
  {
    const float* p = z_host.data<float>();
    for (std::int64_t i = 0; i < z.size(); ++i)
      ref += static_cast<double>(p[i]) * p[i];
    ref /= static_cast<double>(z.size());
  }
  fmt::print("{:.6f}   (E[sin(N(0,1))^2] = (1 - e^-2) / 2 = {:.6f})\n", mean_sq, (1 - std::exp(-2.0)) / 2);
  t.check(std::abs(mean_sq - ref) <= 1e-4 * ref, "mean(square(z)) equals the host's mean (rtol 1e-4)");

  fmt::print(">>> r = sum(z, axis=1)\n");
  const auto r = am::sum(z, {1});
  fmt::print("{}\n", r.to_string());
  t.show("r", r, false);
  auto row_sums = am::host_array::zeros({t.n}, am::dtype::float64);
  {
    const float* p = z_host.data<float>();
    double* out = row_sums.data<double>();
    for (std::int64_t i = 0; i < t.n; ++i)
      for (std::int64_t j = 0; j < t.n; ++j)
        out[i] += p[i * t.n + j];
  }
  t.check(am::allclose(r.to_host(), row_sums, 1e-3, 5e-2), "sum(z, axis=1) equals the host's row sums");
}

// ---- 5. jit --------------------------------------------------------------------------------------

void jitted(tour& t) {
  t.header("5. jit: trace once per signature, one program per shard");
  const am::mesh mesh(am::create_device_mesh({4, 2}, t.cpus), {"a", "b"});
  auto y = am::normal(am::random_key(1), {t.n, t.n}, am::make_named_sharding(mesh, am::P("a", "b")));
  fmt::print(">>> f = jit(lambda a, b: sin(a) * cos(b) + a / 2)\n");
  auto body = [](const am::array& a, const am::array& b) { return am::sin(a) * am::cos(b) + a / 2.0; };
  auto f = am::jit(body, "f");
  fmt::print(">>> out = f(y, y)\n");
  const auto out = f(y, y);
  t.show("out", out, true);
  t.check(out.sharding()->is_equivalent_to(*y.sharding(), 2), "f(y, y) is laid out like y");
  t.check(am::allclose(out.to_host(), body(y, y).to_host(), 1e-5, 1e-6), "jit(f)(y, y) equals f(y, y) run eagerly");
  f(y, y).block_until_ready();
  t.check(f.cache_size() == 1, "a second call with the same signature reuses the traced plan");
  fmt::print(">>> f.lower(y, y) (the per-shard programs, first lines)\n");
  const auto text = f.lowered_text(y, y);
  std::size_t pos = 0;
  for (int line = 0; line < 16 && pos < text.size(); ++line) {
    const auto end = text.find('\n', pos);
    fmt::print("  {}\n", text.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    pos = end == std::string::npos ? text.size() : end + 1;
  }
  if (pos < text.size())
    fmt::print("  ...\n");
}

// ---- 6. Timing -----------------------------------------------------------------------------------

void timing(tour& t) {
  t.header("6. Timing: sin on one device against 8-way sharded, " + shape_text({t.n, t.n}) + " float32");
  auto x = am::normal(am::random_key(0), {t.n, t.n}, am::make_single_device_sharding(t.cpus[0]));
  auto y = am::device_put(x, am::share(am::positional_sharding(am::create_device_mesh({8}, t.cpus)).reshape({4, 2})));
  y.block_until_ready();
  auto jsin = am::jit([](const am::array& a) { return am::sin(a); }, "sin");
  const int runs = 5;
  const auto time = [&](auto&& op) { return median_ms([&] { op().block_until_ready(); }, runs); };
  const double eager1 = time([&] { return am::sin(x); });
  const double eager8 = time([&] { return am::sin(y); });
  const double jit1 = time([&] { return jsin(x); });
  const double jit8 = time([&] { return jsin(y); });
  fmt::print("median of {} calls after a warm-up, ms per call (sin(.).block_until_ready()):\n", runs);
  fmt::print("  {:<6} {:>14} {:>14} {:>10}\n", "", "x: 1 device", "y: 8 devices", "ratio");
  fmt::print("  {:<6} {:>14.2f} {:>14.2f} {:>9.2f}x\n", "eager", eager1, eager8, eager1 / eager8);
  fmt::print("  {:<6} {:>14.2f} {:>14.2f} {:>9.2f}x\n", "jit", jit1, jit8, jit1 / jit8);
  fmt::print("(the seed, on a TPU v3-8, 8192x8192: 9.69 ms on one device, 1.86 ms on 8. Our 8 devices share\n"
             " this machine's cores and memory bandwidth, so the ratio is bounded by those, not by 8.)\n");
  t.check(am::allclose(jsin(y).to_host(), am::sin(x).to_host(), 1e-6, 1e-6), "jit(sin)(y) equals sin(x)");
}

/// Runs every section; returns the exit status.
int run(int argc, char** argv) {
  tour t;
  am::demo::command_line cli("sharding_tour", "Distributed arrays and automatic parallelization (seed 001) in C++ on "
                                              "8 CPU devices");
  cli.add_switch("--quick", t.quick, "1024x1024 arrays instead of 8192x8192 (the same pictures)");
  if (auto status = cli.parse(argc, argv))
    return *status;
  if (t.quick)
    t.n = 1024;
  am::runtime rt(argc, argv);
  t.cpus = am::devices(am::platform::cpu);
  if (t.cpus.size() < 8) {
    fmt::print(stderr, "error: the tour requires 8 devices to run, found {} CPU devices\n", t.cpus.size());
    return 2;
  }
  t.cpus.resize(8);
  fmt::print("actormesh sharding tour: {} CPU devices, arrays {} float32{}\n", t.cpus.size(),
             shape_text({t.n, t.n}), t.quick ? " (--quick)" : "");
  introduction(t);
  positional(t);
  named(t);
  computation(t);
  jitted(t);
  timing(t);
  if (t.failures == 0)
    fmt::print("\nall {} checks passed\n", t.checks);
  else
    fmt::print("\n{} of {} checks FAILED\n", t.failures, t.checks);
  return t.failures == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout); // the error comes after what the tour printed so far
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
}
