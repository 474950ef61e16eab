// grad of broadcasting, reductions, reshape/transpose and matmul against central finite
// differences in float64; value_and_grad; composition with jit; JAX's errors.
#include "grad_test_support.hpp"

#include <functional>
#include <string>

using namespace am;
using namespace am::testing;
using namespace grad_test;

TEST_CASE("grad of broadcasting matches central differences", "[grad][broadcast]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P());
  // [4, 2] against [2] (a new leading dim) and [4, 1] (a size-1 dim).
  check_gradients([](const array& x, const array& b) { return sum(square(x + b)); },
                  {sample({4, 2}, 5), sample({2}, 6)}, s);
  check_gradients([](const array& x, const array& c) { return sum(x * c * c); },
                  {sample({4, 2}, 7), sample({4, 1}, 8)}, s);
  check_gradients([](const array& x, const array& c) { return sum(x * c); },
                  {sample({4, 2}, 9), sample({}, 10)}, s);
}

TEST_CASE("grad of sum, mean, max and min reductions matches central differences", "[grad][reductions]") {
  runtime rt(eight_cpus());
  std::vector<std::pair<std::string, std::function<array(const array&)>>> ops{
    {"sum over axes", [](const array& x) { return sum(square(sum(x, {0}))) + sum(sin(sum(x, {1}))); }},
    {"mean", [](const array& x) { return mean(square(x)) + sum(square(mean(x, {1}))); }},
    {"max", [](const array& x) { return max(x) + sum(square(max(x, {0}))); }},
    {"min", [](const array& x) { return min(x) * 2.0 + sum(min(x, {1})); }},
  };
  auto layout = GENERATE(0, 1);
  auto s = layout == 0 ? on_4x2(P()) : on_4x2(P("x", "y"));
  for (auto& [name, f] : ops) {
    INFO(name << " on " << s->to_string());
    check_gradients(f, {sample({8, 4}, 11)}, s);
  }
}

TEST_CASE("grad of reshape, transpose and matmul matches central differences", "[grad][shape]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P("x"));
  check_gradients([](const array& x) { return sum(square(reshape(x, {2, 16})) * 0.5); }, {sample({8, 4}, 12)}, s);
  check_gradients([](const array& x) { return sum(transpose(x) * reshape(x, {4, 8})); }, {sample({8, 4}, 13)}, s);
  check_gradients([](const array& x, const array& w) { return sum(tanh(matmul(x, w))); },
                  {sample({8, 4}, 14), sample({4, 2}, 15)}, s);
  // A 2-layer network: matmul, broadcast bias, tanh, mean of a square.
  // The input is a concrete array the function captures.
  auto x = device_put(sample({4, 4}, 21), on_4x2(P("x")));
  check_gradients([x](const array& w1, const array& w2) {
                    auto h = tanh(matmul(x, w1) + 0.1);
                    return mean(square(matmul(h, w2) - 1.0));
                  },
                  {sample({4, 8}, 16), sample({8, 2}, 17)}, on_4x2(P()));
}

TEST_CASE("value_and_grad returns the value and the gradients", "[grad]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P("x"));
  auto x = device_put(sample({8, 2}, 18), s);
  auto w = device_put(host_array::scalar(2.0), on_4x2(P()));
  auto loss = [](const array& w, const array& x) { return mean(square(x * w - 1.0)); };
  auto [value, dw] = value_and_grad(loss)(w, x);
  CHECK(value.to_host().item<double>() == Approx(loss(w, x).to_host().item<double>()).epsilon(1e-12));
  CHECK(dw.shape() == shape_t{});
  auto [value2, both] = value_and_grad(loss, {0, 1})(w, x);
  REQUIRE(both.size() == 2);
  CHECK(values(both[0]) == values(dw));
  CHECK(both[1].shape() == x.shape());
  // The same value passed twice gets one gradient each (not their sum).
  auto g = grad([](const array& a, const array& b) { return sum(a * 3.0 + b); }, {0, 1})(x, x);
  CHECK(values(g[0]) == std::vector<double>(16, 3.0));
  CHECK(values(g[1]) == std::vector<double>(16, 1.0));
  // An argument the output does not depend on gets zeros.
  auto z = grad([](const array& a, const array&) { return sum(a); }, 1)(x, w);
  CHECK(values(z) == std::vector<double>{0.0});
}

TEST_CASE("grad composes with jit both ways and is cached per signature", "[grad][jit]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P("x"));
  auto x = device_put(sample({8, 2}, 19), s);
  auto f = [](const array& a) { return sum(sin(a) * a); };
  auto expected = values(grad(f)(x));
  auto inner = grad(jit(f));
  CHECK(values(inner(x)) == expected);
  auto outer = jit(grad(f));
  CHECK(values(outer(x)) == expected);
  CHECK(values(outer(x)) == expected);
  CHECK(outer.cache_size() == 1);
  // Second derivative: grad of grad (d/dx sum(x^3) = 3x^2, then d/dx sum(3x^2) = 6x).
  auto g2 = grad([](const array& a) { return sum(grad([](const array& b) { return sum(b * b * b); })(a)); });
  CHECK(all_close(values(g2(x)), values(x * 6.0), 1e-12, 1e-12));
}

TEST_CASE("grad refuses what JAX refuses, with JAX's words", "[grad][errors]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P());
  auto v = device_put(sample({3}, 20), s);
  // Wording from tests/data/pmap_jax_reference.txt.
  CHECK_THROWS_WITH(grad([](const array& a) { return a * 2.0; })(v),
                    "Gradient only defined for scalar-output functions. Output had shape: (3,).");
  auto i = device_put(host_array::scalar(3).astype(dtype::int32), s);
  CHECK_THROWS_WITH(grad([](const array& a) { return a * 2; })(i),
                    "grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of np.inexact), "
                    "but got int32. If you want to use Boolean- or integer-valued inputs, use vjp or set allow_int "
                    "to True.");
}

TEST_CASE("grad records no product for the gradient of an argument it does not differentiate", "[grad][matmul]") {
  runtime rt(eight_cpus());
  auto loss = [](const array& w1, const array& w2, const array& x, const array& y) {
    return mean(square(matmul(tanh(matmul(x, w1)), w2) - y));
  };
  auto d = am::devices(platform::cpu)[0];
  auto w1 = device_put(sample({6, 8}, 70), d), w2 = device_put(sample({8, 3}, 71), d);
  auto x = device_put(sample({5, 6}, 72), d), y = device_put(sample({5, 3}, 73), d);
  auto count_dots = [](const std::string& text) {
    std::size_t n = 0;
    for (auto at = text.find(" = dot "); at != std::string::npos; at = text.find(" = dot ", at + 1))
      ++n;
    return n;
  };
  // 2 forward products; backward: the hidden layer's cotangent and the two weights' gradients. The
  // data's gradient (a 6th product) is never recorded.
  auto weights = jit([&](const array& a, const array& b, const array& c, const array& e) {
    auto g = grad(loss, {0, 1})(a, b, c, e);
    return std::make_tuple(g[0], g[1]);
  });
  CHECK(count_dots(weights.lowered_text(w1, w2, x, y)) == 5);
  // Only w2: the hidden layer's cotangent is not needed either.
  auto second = jit([&](const array& a, const array& b, const array& c, const array& e) {
    return grad(loss, 1)(a, b, c, e);
  });
  CHECK(count_dots(second.lowered_text(w1, w2, x, y)) == 3);
  // The data too: all 6.
  auto all = jit([&](const array& a, const array& b, const array& c, const array& e) {
    auto g = grad(loss, {0, 1, 2})(a, b, c, e);
    return std::make_tuple(g[0], g[1], g[2]);
  });
  CHECK(count_dots(all.lowered_text(w1, w2, x, y)) == 6);
  // And the values did not change: the weights' gradients by central differences.
  auto xr = device_put(sample({5, 6}, 72), on_4x2(P())), yr = device_put(sample({5, 3}, 73), on_4x2(P()));
  check_gradients([&](const array& a, const array& b) { return loss(a, b, xr, yr); },
                  {sample({6, 8}, 70), sample({8, 3}, 71)}, on_4x2(P()));
}
