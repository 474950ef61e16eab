// vmap against a loop over the examples: in_axes/out_axes, broadcast arguments, matmul and
// reductions per example, composition with jit and grad, collectives over a vmap axis, errors.
#include "grad_test_support.hpp"

using namespace am;
using namespace am::testing;
using namespace grad_test;

namespace {

/// Example i of host array h along `axis`.
host_array example(const host_array& h, std::int64_t axis, std::int64_t i) {
  std::vector<host_array::slice_spec> spec(static_cast<std::size_t>(h.ndim()));
  spec[static_cast<std::size_t>(axis)] = {i, i + 1, 1};
  auto s = h.slice(spec);
  auto shape = s.shape();
  shape.erase(shape.begin() + axis);
  return s.reshape(shape);
}

/// The results of f on each example, stacked along dim 0 on the host.
template <class F>
std::vector<double> loop(const F& f, const host_array& xs, std::int64_t axis, const sharding_ptr& s) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < xs.shape()[static_cast<std::size_t>(axis)]; ++i) {
    auto r = values(f(device_put(example(xs, axis, i), s)));
    out.insert(out.end(), r.begin(), r.end());
  }
  return out;
}

} // namespace

TEST_CASE("vmap matches a loop over the examples", "[vmap]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P());
  auto xs = sample({3, 4, 2}, 30);
  auto w = device_put(sample({2, 5}, 31), s);
  auto g = [w](const array& x) {
    auto h = tanh(matmul(x, w));          // [4, 5]
    auto r = reshape(transpose(h), {20}); // [20]
    return sum(h, {1}) + max(h, {1}) * mean(x) + sum(square(r)) + min(x);
  };
  auto batched = vmap(g)(device_put(xs, s));
  CHECK(batched.shape() == shape_t{3, 4});
  CHECK(all_close(values(batched), loop(g, xs, 0, s), 1e-12, 1e-12));
  // Mapped along dim 1, output along dim 1.
  auto xt = xs.transpose({1, 0, 2}); // [4, 3, 2]
  auto along1 = vmap(g, {1}, {1})(device_put(xt, s));
  CHECK(along1.shape() == shape_t{4, 3});
  CHECK(all_close(values(transpose(along1)), loop(g, xs, 0, s), 1e-12, 1e-12));
  // Negative in_axes count from the end.
  auto last = vmap(g, {-3})(device_put(xs, s));
  CHECK(values(last) == values(batched));
}

TEST_CASE("vmap with a broadcast argument, two mapped arguments and several outputs", "[vmap]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P());
  auto xs = sample({5, 3}, 32), ys = sample({5, 3}, 33), b = sample({3}, 34);
  auto f = [](const array& x, const array& y, const array& c) {
    return std::make_tuple(x * y + c, sum(x - c), matmul(reshape(x, {3, 1}), reshape(y, {1, 3})));
  };
  auto [p, q, r] = vmap(f, {0, 0, am::none})(device_put(xs, s), device_put(ys, s), device_put(b, s));
  CHECK(p.shape() == shape_t{5, 3});
  CHECK(q.shape() == shape_t{5});
  CHECK(r.shape() == shape_t{5, 3, 3});
  std::vector<double> ep, eq, er;
  for (std::int64_t i = 0; i < 5; ++i) {
    auto x = device_put(example(xs, 0, i), s), y = device_put(example(ys, 0, i), s);
    auto [a, c, d] = f(x, y, device_put(b, s));
    auto va = values(a), vc = values(c), vd = values(d);
    ep.insert(ep.end(), va.begin(), va.end());
    eq.insert(eq.end(), vc.begin(), vc.end());
    er.insert(er.end(), vd.begin(), vd.end());
  }
  CHECK(all_close(values(p), ep, 1e-12, 1e-12));
  CHECK(all_close(values(q), eq, 1e-12, 1e-12));
  CHECK(all_close(values(r), er, 1e-12, 1e-12));
  // An output that does not depend on the mapped axis is broadcast by out_axes 0 ...
  auto k = vmap([](const array&, const array& c) { return c * 2.0; }, {0, am::none})(
    device_put(xs, s), device_put(b, s));
  CHECK(k.shape() == shape_t{5, 3});
  // ... and kept once by out_axes none.
  auto once = vmap([](const array&, const array& c) { return c * 2.0; }, {0, am::none}, {am::none})(
    device_put(xs, s), device_put(b, s));
  CHECK(once.shape() == shape_t{3});
  CHECK(values(once) == values(device_put(b, s) * 2.0));
}

TEST_CASE("vmap composes with jit and grad", "[vmap][grad][jit]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P());
  auto xs = sample({4, 3}, 35);
  auto w = device_put(sample({3}, 36), s);
  auto loss = [](const array& w, const array& x) { return sum(square(tanh(x * w))); };
  // Per-example gradients: vmap of grad, against a loop of grad.
  auto per_example = vmap(grad(loss), {am::none, 0})(w, device_put(xs, s));
  CHECK(per_example.shape() == shape_t{4, 3});
  std::vector<double> expected;
  for (std::int64_t i = 0; i < 4; ++i) {
    auto g = values(grad(loss)(w, device_put(example(xs, 0, i), s)));
    expected.insert(expected.end(), g.begin(), g.end());
  }
  CHECK(all_close(values(per_example), expected, 1e-12, 1e-12));
  // grad of a vmapped loss equals the sum of the per-example gradients.
  auto total = grad([](const array& w, const array& x) {
    return sum(vmap([&w](const array& xi) { return sum(square(tanh(xi * w))); })(x));
  })(w, device_put(xs, s));
  std::vector<double> summed(3, 0.0);
  for (std::size_t i = 0; i < expected.size(); ++i)
    summed[i % 3] += expected[i];
  CHECK(all_close(values(total), summed, 1e-12, 1e-12));
  // jit around vmap and vmap around jit agree.
  auto f = [](const array& x) { return tanh(x) * 2.0; };
  auto xa = device_put(xs, s);
  auto plain = values(vmap(f)(xa));
  auto jv = jit(vmap(f));
  CHECK(values(jv(xa)) == plain);
  CHECK(values(vmap(jit(f))(xa)) == plain);
  CHECK(jv.cache_size() == 1);
}

TEST_CASE("matmul inside vmap: nested vmaps and gradients through the batched product", "[vmap][grad]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P());
  auto xs = sample({2, 3, 4, 5}, 39);
  auto w = sample({5, 2}, 40);
  auto ws = sample({2, 3, 5, 2}, 41);
  // vmap of vmap with shared 2-D weights, and with per-example weights.
  auto shared = vmap(vmap([](const array& x, const array& v) { return matmul(x, v); }, {0, am::none}),
                     {0, am::none})(device_put(xs, s), device_put(w, s));
  auto own = vmap(vmap([](const array& x, const array& v) { return matmul(x, v); }))(device_put(xs, s),
                                                                                     device_put(ws, s));
  CHECK(shared.shape() == shape_t{2, 3, 4, 2});
  CHECK(own.shape() == shape_t{2, 3, 4, 2});
  std::vector<double> e_shared, e_own;
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j) {
      auto x = device_put(example(example(xs, 0, i), 0, j), s);
      auto a = values(matmul(x, device_put(w, s)));
      auto b = values(matmul(x, device_put(example(example(ws, 0, i), 0, j), s)));
      e_shared.insert(e_shared.end(), a.begin(), a.end());
      e_own.insert(e_own.end(), b.begin(), b.end());
    }
  CHECK(all_close(values(shared), e_shared, 1e-12, 1e-12));
  CHECK(all_close(values(own), e_own, 1e-12, 1e-12));
  // Gradients through the batched product, shared and per-example weights, by finite differences.
  check_gradients([](const array& x, const array& v) {
    auto layer = [](const array& xi, const array& vi) { return tanh(matmul(xi, vi)); };
    return sum(square(vmap(layer, {0, am::none})(x, v)));
  }, {sample({3, 4, 5}, 42), sample({5, 2}, 43)}, s);
  check_gradients([](const array& x, const array& v) {
    return sum(square(vmap([](const array& xi, const array& vi) { return tanh(matmul(xi, vi)); })(x, v)));
  }, {sample({3, 4, 5}, 44), sample({3, 5, 2}, 45)}, s);
}

TEST_CASE("a batch split over devices stays split", "[vmap]") {
  runtime rt(eight_cpus());
  auto xs = sample({8, 3, 2}, 46);
  auto w = device_put(sample({2, 4}, 47), on_4x2(P()));
  auto f = [w](const array& x) { return sum(tanh(matmul(x, w)), {1}) + mean(x); };
  auto split = device_put(xs, on_4x2(P("x")));
  auto out = vmap(f)(split);
  CHECK(out.shape() == shape_t{8, 3});
  CHECK(!out.sharding()->is_fully_replicated());
  CHECK(out.sharding()->is_equivalent_to(*on_4x2(P("x")), 2));
  CHECK(all_close(values(out), values(vmap(f)(device_put(xs, on_4x2(P())))), 1e-12, 1e-12));
}

TEST_CASE("collectives over a vmap axis run across the batch", "[vmap][collectives]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P());
  auto xs = device_put(host_array::arange(8, dtype::float64).reshape({4, 2}), s);
  auto centered = vmap([](const array& x) { return x - psum(x, "b"); }, {0}, {0}, "b")(xs);
  CHECK(values(centered) == values(xs - sum(xs, {0})));
  auto idx = vmap([](const array& x) { return astype(axis_index("b"), dtype::float64) + x * 0.0; }, {0}, {0}, "b")(xs);
  CHECK(values(idx) == std::vector<double>{0, 0, 1, 1, 2, 2, 3, 3});
}

TEST_CASE("vmap refuses what JAX refuses, with JAX's words", "[vmap][errors]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P());
  auto x = device_put(sample({4, 2}, 37), s);
  auto y = device_put(sample({3}, 38), s);
  auto id = [](const array& a) { return a; };
  CHECK_THROWS_WITH(vmap(id, {am::none})(x),
                    "vmap must have at least one non-None value in in_axes or axis_size must be specified");
  CHECK_THROWS_WITH(vmap(id, {0}, {am::none})(x),
                    "at vmap out_axes, got axis spec None but output was batched on axis 0");
  CHECK_THROWS_WITH(vmap([](const array& a, const array& b) { return a * 2.0 + sum(b); })(x, y),
                    Catch::StartsWith("vmap got inconsistent sizes for array axes to be mapped:\n"));
  CHECK_THROWS_WITH(vmap(id, {2})(x), "vmap was requested to map its argument along axis 2, which implies that its "
                                      "rank should be at least 3, but is only 2 (its shape is (4, 2))");
  CHECK_THROWS_WITH(vmap([](const array& a) { return psum(a, "nope"); })(x), "unbound axis name: nope");
}
