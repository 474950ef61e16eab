// grad of every differentiable elementwise operation against central finite differences in
// float64, on replicated and sharded arrays; JAX's conventions at ties and at zero.
#include "grad_test_support.hpp"

#include <functional>
#include <string>

using namespace am;
using namespace am::testing;
using namespace grad_test;

namespace {

using unary_fn = std::function<array(const array&)>;
using binary_fn = std::function<array(const array&, const array&)>;

} // namespace

TEST_CASE("grad of one-operand operations matches central differences", "[grad][elementwise]") {
  runtime rt(eight_cpus());
  std::vector<std::pair<std::string, unary_fn>> ops{
    {"neg", [](const array& x) { return sum(neg(x)); }},
    {"abs", [](const array& x) { return sum(abs(x)); }},
    {"sin", [](const array& x) { return sum(sin(x)); }},
    {"cos", [](const array& x) { return sum(cos(x)); }},
    {"tanh", [](const array& x) { return sum(tanh(x)); }},
    {"exp", [](const array& x) { return sum(exp(x)); }},
    {"log", [](const array& x) { return sum(log(abs(x) + 0.5)); }},
    {"sqrt", [](const array& x) { return sum(sqrt(abs(x) + 0.5)); }},
    {"square", [](const array& x) { return sum(square(x)); }},
    {"scalar ops", [](const array& x) { return sum(2.0 - x * 3.0 + 1.5 / (x + 4.0)); }},
    {"complex_computation", [](const array& x) {
       auto y = sin(x) * cos(x);
       return sum((tanh(y) + sqrt(abs(x) + 0.25)) * 2.0);
     }},
  };
  auto layout = GENERATE(0, 1);
  auto s = layout == 0 ? on_4x2(P()) : on_4x2(P("x", "y"));
  for (auto& [name, f] : ops) {
    INFO(name << " on " << s->to_string());
    check_gradients(f, {sample({4, 2}, 1)}, s);
  }
}

TEST_CASE("grad of two-operand operations matches central differences", "[grad][elementwise]") {
  runtime rt(eight_cpus());
  std::vector<std::pair<std::string, binary_fn>> ops{
    {"add", [](const array& x, const array& y) { return sum(x + y * x); }},
    {"subtract", [](const array& x, const array& y) { return sum(square(x - y)); }},
    {"multiply", [](const array& x, const array& y) { return sum(x * y); }},
    {"divide", [](const array& x, const array& y) { return sum(x / (y + 3.0)); }},
    {"maximum", [](const array& x, const array& y) { return sum(maximum(x, y) * x); }},
    {"minimum", [](const array& x, const array& y) { return sum(minimum(x, y) * y); }},
    {"power", [](const array& x, const array& y) { return sum(power(abs(x) + 0.5, y)); }},
    {"where", [](const array& x, const array& y) { return sum(where(x > y, x * y, x - y)); }},
  };
  auto s = on_4x2(P("x"));
  for (auto& [name, f] : ops) {
    INFO(name);
    check_gradients(f, {sample({4, 2}, 2), sample({4, 2}, 3)}, s);
  }
}

TEST_CASE("grad follows JAX at ties and at zero", "[grad][elementwise]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P());
  // Values from tests/data/pmap_jax_reference.txt.
  auto x = device_put(host_array::from_vector(std::vector<double>{1.0, 3.0, 3.0}), s);
  CHECK(values(grad([](const array& a) { return max(a); })(x)) == std::vector<double>{0.0, 0.5, 0.5});
  auto y = device_put(host_array::from_vector(std::vector<double>{1.0, 2.0, 3.0}), s);
  CHECK(values(grad([](const array& a) { return sum(maximum(a, 2.0)); })(y)) == std::vector<double>{0.0, 0.5, 1.0});
  auto z = device_put(host_array::from_vector(std::vector<double>{-1.0, 0.0, 2.0}), s);
  CHECK(values(grad([](const array& a) { return sum(abs(a)); })(z)) == std::vector<double>{-1.0, 1.0, 1.0});
}

TEST_CASE("grad through dtype conversions keeps the argument's dtype", "[grad][elementwise]") {
  runtime rt(eight_cpus());
  auto x = device_put(sample({4, 2}, 4).astype(dtype::float32), on_4x2(P("x")));
  auto g = grad([](const array& a) { return sum(astype(a, dtype::float64) * 3.0); })(x);
  CHECK(g.dtype() == dtype::float32);
  CHECK(values(g) == std::vector<double>(8, 3.0));
  // Integer intermediates carry no gradient.
  auto h = grad([](const array& a) { return sum(a * astype(astype(a, dtype::int32), dtype::float32)); })(x);
  CHECK(all_close(values(h), values(astype(astype(x, dtype::int32), dtype::float32))));
}
