// Fused regions shared between threads (devices/cpu/cpu_region_runner.hpp): helpers really take
// chunks of a region another thread runs, and whatever the split, results are bit for bit those of
// one thread alone (programs with constants computed once per thread, gathers, several outputs,
// sizes that do not fill the last chunk or tile); many threads running and helping at once.
#include "support/arrays.hpp"

#include "devices/cpu/cpu_buffer.hpp"
#include "devices/cpu/cpu_region_runner.hpp"
#include "devices/cpu/cpu_runner.hpp"
#include "devices/detail/buffer_pool.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

using am::opcode;

namespace {

/// (tanh(sin x * cos x) + sqrt|x|) * 2 and x * 3 + 1 (a constant broadcast: the region's prologue),
/// and the transpose of x plus itself (a gather), over an n x n float32 x.
std::shared_ptr<const am::program> test_program(std::int64_t n) {
  am::value_type t{am::dtype::float32, {n, n}};
  am::program_builder b("shared_regions");
  auto x = b.parameter(t);
  auto y = b.binary(opcode::multiply, b.unary(opcode::sin, x), b.unary(opcode::cos, x));
  auto z = b.binary(opcode::add, b.unary(opcode::tanh, y), b.unary(opcode::sqrt, b.unary(opcode::abs, x)));
  b.output(b.binary(opcode::multiply, z, b.constant(2.0, t)));
  b.output(b.binary(opcode::add, b.binary(opcode::multiply, x, b.constant(3.0, t)), b.constant(1.0, t)));
  b.output(b.binary(opcode::add, b.transpose(x, {1, 0}), x));
  return b.build();
}

struct setup {
  std::int64_t n;
  std::shared_ptr<am::detail::buffer_pool> pool = std::make_shared<am::detail::buffer_pool>(0, 0);
  std::shared_ptr<const am::program> prog;
  std::shared_ptr<const am::detail::compiled_program> compiled;
  std::vector<am::buffer_ref> inputs;

  explicit setup(std::int64_t size) : n(size), prog(test_program(size)) {
    compiled = am::detail::compile_for_cpu(*prog);
    auto in = am::detail::make_cpu_buffer(am::dtype::float32, {n, n}, pool);
    auto* x = static_cast<float*>(in->data());
    for (std::int64_t i = 0; i < n * n; ++i)
      x[i] = static_cast<float>((i * 7919) % 20011) * 1e-3f - 10.0f;
    inputs.push_back(in);
  }

  std::vector<std::vector<float>> run(am::detail::cpu_scratch& scratch) const {
    auto outs = am::detail::run_compiled(*compiled, *prog, inputs, pool, scratch);
    std::vector<std::vector<float>> values;
    for (auto& o : outs) {
      std::vector<float> v(static_cast<std::size_t>(o->size()));
      std::memcpy(v.data(), o->data(), v.size() * sizeof(float));
      values.push_back(std::move(v));
    }
    return values;
  }
};

/// Restores sharing as it was.
struct sharing_scope {
  bool before = am::detail::region_sharing();
  ~sharing_scope() { am::detail::set_region_sharing(before); }
};

} // namespace

TEST_CASE("a helper takes chunks of a region another thread runs, and the results do not change",
          "[cpu][sharing]") {
  sharing_scope restore;
  setup s(1531); // 2.3 M elements: 72 chunks, the last chunk and tile partly filled
  am::detail::cpu_scratch alone_scratch;
  am::detail::set_region_sharing(false);
  auto alone = s.run(alone_scratch);
  am::detail::set_region_sharing(true);
  bool helped = false;
  for (int attempt = 0; attempt < 10 && !helped; ++attempt) { // bounded: a helper may miss a run
    auto before = am::detail::helped_region_chunks();
    std::atomic<bool> done{false};
    std::thread helper([&] {
      am::detail::cpu_scratch scratch;
      auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (!done.load() && std::chrono::steady_clock::now() < until)
        if (am::detail::help_fused_regions(scratch) == 0)
          std::this_thread::yield();
    });
    am::detail::cpu_scratch scratch;
    auto shared = s.run(scratch);
    done = true;
    helper.join();
    CHECK(shared == alone);
    helped = am::detail::helped_region_chunks() > before;
  }
  CHECK(helped);
}

TEST_CASE("eight threads running and helping each other's regions give one thread's results", "[cpu][sharing]") {
  sharing_scope restore;
  am::detail::set_region_sharing(true);
  std::vector<setup> setups;
  for (std::int64_t n : {700, 513, 1024, 300, 811, 640, 257, 999})
    setups.emplace_back(n);
  std::vector<std::vector<std::vector<float>>> want;
  for (auto& s : setups) {
    am::detail::set_region_sharing(false);
    am::detail::cpu_scratch scratch;
    want.push_back(s.run(scratch));
  }
  am::detail::set_region_sharing(true);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < setups.size(); ++t)
    threads.emplace_back([&, t] {
      am::detail::cpu_scratch scratch;
      for (int round = 0; round < 4; ++round)
        if (setups[t].run(scratch) != want[t])
          ++mismatches;
    });
  for (auto& th : threads)
    th.join();
  CHECK(mismatches == 0);
}

TEST_CASE("jitted complex_computation on 8 devices is the same with and without shared regions",
          "[cpu][sharing][array]") {
  sharing_scope restore;
  am::runtime rt(am::testing::eight_cpus());
  am::mesh m(am::create_device_mesh({8}, am::devices(am::platform::cpu)), {"x"});
  const std::int64_t n = 1024;
  std::vector<float> v(static_cast<std::size_t>(n * n));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(i % 1000) * 0.001f - 0.5f;
  auto x = am::device_put(am::host_array::from_vector(v, {n, n}), am::make_named_sharding(m, am::P("x")));
  auto f = am::jit([](const am::array& a) {
    auto y = am::sin(a) * am::cos(a);
    return (am::tanh(y) + am::sqrt(am::abs(a))) * 2.0;
  });
  am::detail::set_region_sharing(false);
  auto off = f(x).to_host().to_vector<float>();
  am::detail::set_region_sharing(true);
  for (int k = 0; k < 5; ++k)
    CHECK(f(x).to_host().to_vector<float>() == off);
}
