// The fused compiler: fused and one-instruction-at-a-time execution agree bit for bit on random
// programs; the stages it forms; compiled programs keep lane order through the runtime.
#include "cpu_test_support.hpp"
#include "support/programs.hpp"

#include <random>
#include <string>
#include <thread>

using namespace cpu_test;
using am::opcode;

namespace {

/// Builds a random program over values of shape [rows, cols] (several dtypes), with fusable chains
/// broken by reductions, transposes, slices, concatenations and reshapes.
class random_program {
public:
  random_program(unsigned seed, std::int64_t rows, std::int64_t cols)
    : rng_(seed), b_("random" + std::to_string(seed)), rows_(rows), cols_(cols) {}

  std::shared_ptr<const am::program> build(int steps) {
    for (auto dt : {am::dtype::float32, am::dtype::float64, am::dtype::int32})
      add(b_.parameter({dt, shape()}));
    add(b_.parameter({am::dtype::float16, shape()}));
    for (int s = 0; s < steps; ++s)
      step();
    std::vector<std::int32_t> outs;
    for (int k = 0; k < 3; ++k)
      b_.output(pick_any());
    return b_.build();
  }

private:
  am::shape_t shape() const { return {rows_, cols_}; }

  void add(std::int32_t v) { values_.push_back(v); }

  int choose(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  std::int32_t pick_any() { return values_[static_cast<std::size_t>(choose(static_cast<int>(values_.size())))]; }

  std::int32_t pick(am::dtype dt) {
    std::vector<std::int32_t> of;
    for (auto v : values_)
      if (b_.type_of(v).dtype == dt)
        of.push_back(v);
    if (of.empty())
      return -1;
    return of[static_cast<std::size_t>(choose(static_cast<int>(of.size())))];
  }

  void step() {
    static const opcode unary[] = {opcode::neg, opcode::abs, opcode::sin, opcode::cos, opcode::tanh,
                                   opcode::exp, opcode::log, opcode::sqrt, opcode::square};
    static const opcode binary[] = {opcode::add, opcode::subtract, opcode::multiply, opcode::divide,
                                    opcode::maximum, opcode::minimum, opcode::power};
    static const am::dtype dtypes[] = {am::dtype::float32, am::dtype::float64, am::dtype::int32,
                                       am::dtype::float16, am::dtype::bool_, am::dtype::uint8};
    auto x = pick_any();
    auto dt = b_.type_of(x).dtype;
    switch (choose(12)) {
      case 0:
      case 1: add(b_.unary(unary[choose(9)], x)); break;
      case 2:
      case 3: add(b_.binary(binary[choose(7)], x, pick(dt))); break;
      case 4: add(b_.convert(x, dtypes[choose(6)])); break;
      case 5: add(b_.select(b_.binary(opcode::less, x, pick(dt)), x, pick(dt))); break;
      case 6: add(choose(2) ? b_.constant(choose(5) - 1.5, {dt, shape()}) : b_.iota({dt, shape()})); break;
      case 7: { // a row reduction broadcast back (a fusion barrier feeding the next region)
        auto r = b_.reduce(choose(2) ? opcode::reduce_sum : opcode::reduce_max, x, {0});
        add(b_.binary(opcode::add, x, b_.broadcast_in_dim(r, shape(), {1})));
        break;
      }
      case 8: add(b_.transpose(b_.unary(opcode::neg, b_.transpose(x, {1, 0})), {1, 0})); break;
      case 9: {
        auto top = b_.slice(x, {0, 0}, {rows_ / 2, cols_});
        auto bottom = b_.slice(x, {rows_ / 2, 0}, {rows_, cols_});
        add(b_.concatenate({bottom, top}, 0));
        break;
      }
      case 10: add(b_.reshape(b_.unary(opcode::abs, b_.reshape(x, {rows_ * cols_})), shape())); break;
      default:
        if (am::is_floating(dt))
          add(b_.random(opcode::random_uniform, {dt, shape()}, 42 + values_.size(), shape(), {0, 0}));
        else
          add(b_.binary(opcode::multiply, x, x));
    }
  }

  std::mt19937 rng_;
  am::program_builder b_;
  std::int64_t rows_, cols_;
  std::vector<std::int32_t> values_;
};

std::vector<std::byte> random_bytes(const am::value_type& t, std::mt19937& rng) {
  std::vector<std::byte> out(static_cast<std::size_t>(am::element_count(t.shape)) * am::size_of(t.dtype));
  std::uniform_real_distribution<double> u(-4, 4);
  for (std::int64_t i = 0; i < am::element_count(t.shape); ++i) {
    double v = u(rng);
    auto at = out.data() + static_cast<std::size_t>(i) * am::size_of(t.dtype);
    switch (t.dtype) {
      case am::dtype::float32: { float f = static_cast<float>(v); std::memcpy(at, &f, 4); break; }
      case am::dtype::float64: std::memcpy(at, &v, 8); break;
      case am::dtype::int32: { auto k = static_cast<std::int32_t>(v * 100); std::memcpy(at, &k, 4); break; }
      default: { auto h = am::float16(v); std::memcpy(at, &h, 2); }
    }
  }
  return out;
}

} // namespace

TEST_CASE("fused and unfused execution agree bit for bit on random programs", "[cpu][fusion]") {
  std::mt19937 data_rng(7);
  std::size_t largest_region = 0, most_stages = 0;
  for (unsigned seed = 1; seed <= 60; ++seed) {
    std::int64_t rows = 5 + seed % 7, cols = 97 + seed % 13; // several tiles of 64, tails everywhere
    auto p = random_program(seed, rows, cols).build(12 + static_cast<int>(seed % 10));
    std::vector<std::vector<std::byte>> inputs;
    for (auto& t : p->input_types())
      inputs.push_back(random_bytes(t, data_rng));
    am::detail::compile_options fused, small_tiles, unfused;
    small_tiles.tile = 64;
    unfused.fuse = false;
    auto a = run_direct(*p, inputs, fused);
    auto b = run_direct(*p, inputs, small_tiles);
    auto c = run_direct(*p, inputs, unfused);
    auto compiled = am::detail::compile_for_cpu(*p);
    most_stages = std::max(most_stages, compiled->stages.size());
    for (auto& r : compiled->regions)
      largest_region = std::max(largest_region, r.steps.size() + r.prologue.size());
    INFO(am::to_string(*p) << "\n" << am::detail::to_string(*compiled, *p));
    REQUIRE(a.size() == c.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
      CHECK(a[k] == c[k]);
      CHECK(b[k] == c[k]);
    }
  }
  CHECK(largest_region >= 8); // the programs really fuse
  CHECK(most_stages >= 5);    // and really have barriers
}

TEST_CASE("complex_computation compiles to one fused loop with its constant hoisted", "[cpu][fusion]") {
  am::value_type t{am::dtype::float32, {1000}};
  am::program_builder b("complex_computation");
  auto x = b.parameter(t);
  auto y = b.binary(opcode::multiply, b.unary(opcode::sin, x), b.unary(opcode::cos, x));
  auto z = b.binary(opcode::add, b.unary(opcode::tanh, y), b.unary(opcode::sqrt, b.unary(opcode::abs, x)));
  b.output(b.binary(opcode::multiply, z, b.constant(2.0, t)));
  auto p = b.build();
  auto c = am::detail::compile_for_cpu(*p);
  INFO(am::detail::to_string(*c, *p));
  REQUIRE(c->stages.size() == 1);
  auto& r = c->regions[0];
  CHECK(r.prologue.size() == 1);
  CHECK(r.steps.size() == 8);
  CHECK(r.outputs == std::vector<std::int32_t>{p->outputs[0]});
  CHECK(r.scratch_rows <= 4);
  auto unfused_opts = am::detail::compile_options{};
  unfused_opts.fuse = false;
  CHECK(am::detail::compile_for_cpu(*p, unfused_opts)->stages.size() == 9);
}

TEST_CASE("barriers split regions, reshape and same-dtype convert are aliases", "[cpu][fusion]") {
  am::value_type t{am::dtype::float32, {8, 16}};
  am::program_builder b("barriers");
  auto x = b.parameter(t);
  auto s = b.unary(opcode::sin, x);
  auto r = b.reduce(opcode::reduce_sum, s, {1});                 // stage
  auto back = b.broadcast_in_dim(r, {8, 16}, {0});               // gather into the next region
  auto y = b.binary(opcode::add, b.convert(s, am::dtype::float32), back);
  b.output(b.reshape(y, {128}));
  auto p = b.build();
  auto c = am::detail::compile_for_cpu(*p);
  INFO(am::detail::to_string(*c, *p));
  REQUIRE(c->stages.size() == 3);
  CHECK(c->stages[0].what == am::detail::cpu_stage::kind::fused);
  CHECK(c->stages[1].what == am::detail::cpu_stage::kind::reduce);
  CHECK(c->stages[2].what == am::detail::cpu_stage::kind::fused);
  CHECK(c->root[static_cast<std::size_t>(p->outputs[0])] == y);
}

TEST_CASE("compiled programs keep every caller's order on a device", "[cpu][fusion][lanes]") {
  am::runtime rt(small_runtime(2));
  auto d = am::devices()[1];
  constexpr int threads = 4, steps = 60;
  std::vector<std::thread> pool;
  std::vector<std::int64_t> results(threads);
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      auto shard = am::upload(d, am::testing::to_bytes(std::vector<std::int64_t>(4, t)), {am::dtype::int64, {4}});
      for (int s = 0; s < steps; ++s)
        shard = am::execute(d, am::testing::step_program(t * 1000 + s), {shard})[0];
      results[static_cast<std::size_t>(t)] = from_bytes<std::int64_t>(am::fetch(d, shard).get(30s))[3];
    });
  for (auto& th : pool)
    th.join();
  for (int t = 0; t < threads; ++t)
    CHECK(results[static_cast<std::size_t>(t)] == am::testing::expected_chain(t, t * 1000, steps));
}

TEST_CASE("a program compiled once serves many calls and several devices", "[cpu][fusion]") {
  am::runtime rt(small_runtime(3));
  am::value_type t{am::dtype::float32, {3000}};
  am::program_builder b("reuse");
  auto x = b.parameter(t);
  b.output(b.binary(opcode::add, b.unary(opcode::sin, x), b.iota(t)));
  auto p = b.build();
  std::vector<float> in(3000);
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<float>(i) * 0.01f;
  auto expected = run_direct(*p, {to_bytes(in)})[0];
  for (auto& d : am::devices())
    for (int k = 0; k < 5; ++k)
      CHECK(run_on(d, p, {to_bytes(in)})[0] == expected);
}

TEST_CASE("edge cases: scalars, empty arrays, identity and repeated outputs, dead code", "[cpu][fusion]") {
  am::runtime rt(small_runtime(2));
  auto d0 = am::devices()[0], d1 = am::devices()[1];
  am::program_builder b("edges");
  auto s = b.parameter({am::dtype::float32, {}});
  auto e = b.parameter({am::dtype::int32, {0, 3}});
  auto v = b.parameter({am::dtype::float32, {4}});
  b.unary(am::opcode::sin, v); // dead
  auto s2 = b.binary(am::opcode::add, s, b.constant(1.5, {am::dtype::float32, {}}));
  b.output(s2);
  b.output(b.binary(am::opcode::multiply, e, e));
  b.output(v);
  b.output(s2);
  b.output(b.binary(am::opcode::add, v, b.broadcast_in_dim(s2, {4}, {})));
  auto p = b.build();
  auto sv = am::upload(d1, to_bytes(std::vector<float>{2.0f}), {am::dtype::float32, {}});
  auto ev = am::upload(d0, {}, {am::dtype::int32, {0, 3}});
  auto vv = am::upload(d1, to_bytes(std::vector<float>{1, 2, 3, 4}), {am::dtype::float32, {4}}); // another device
  auto outs = am::execute(d0, p, {sv, ev, vv});
  REQUIRE(outs.size() == 5);
  CHECK(from_bytes<float>(am::fetch(d0, outs[0]).get(10s)) == std::vector<float>{3.5f});
  CHECK(outs[1].get(10s)->shape() == am::shape_t{0, 3});
  CHECK(outs[1].get(10s)->size() == 0);
  CHECK(from_bytes<float>(am::fetch(d0, outs[2]).get(10s)) == std::vector<float>{1, 2, 3, 4});
  CHECK(outs[2].get(10s)->device_id() == d0.id); // an input from elsewhere is copied to the device
  CHECK(outs[3].get(10s).get() == outs[0].get(10s).get());
  CHECK(from_bytes<float>(am::fetch(d0, outs[4]).get(10s)) == std::vector<float>{4.5f, 5.5f, 6.5f, 7.5f});
  // The identity of an input of the same device is the input itself (buffers are immutable).
  am::program_builder id("identity");
  id.output(id.parameter({am::dtype::float32, {4}}));
  auto mine = am::upload(d1, to_bytes(std::vector<float>{1, 2, 3, 4}), {am::dtype::float32, {4}});
  CHECK(am::execute(d1, id.build(), {mine})[0].get(10s).get() == mine.get(10s).get());
}
