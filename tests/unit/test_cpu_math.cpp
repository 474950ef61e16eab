// Accuracy of the float32/float64 transcendentals of every instruction set: within SLEEF's u35 bound
// (3.5 ULP; u10 for exp and pow) of a long double reference over wide argument ranges, special
// values as C99 gives them, and sqrt correctly rounded.
#include "cpu_test_support.hpp"

#include <random>
#include <string>

using namespace cpu_test;
using am::opcode;

namespace {

template <class T>
std::vector<T> arguments(opcode op) {
  std::mt19937 rng(static_cast<unsigned>(op) * 31 + sizeof(T));
  double lo = -30, hi = 30;
  if (op == opcode::log || op == opcode::sqrt)
    lo = 1e-30, hi = 1e30;
  if (op == opcode::exp)
    lo = -80, hi = 80;
  if (op == opcode::tanh)
    lo = -12, hi = 12;
  std::vector<T> xs;
  std::uniform_real_distribution<double> u(lo, hi);
  std::uniform_real_distribution<double> e(-30, 30);
  for (int i = 0; i < 4000; ++i) {
    if ((op == opcode::log || op == opcode::sqrt) && i % 2)
      xs.push_back(static_cast<T>(std::pow(10.0, e(rng)))); // every magnitude
    else
      xs.push_back(static_cast<T>(u(rng)));
  }
  for (double big : {1e4, 1e6, 1e7})
    xs.push_back(static_cast<T>(op == opcode::sin || op == opcode::cos ? big : 1.5));
  return xs;
}

long double reference(opcode op, long double x) {
  switch (op) {
    case opcode::sin: return std::sin(x);
    case opcode::cos: return std::cos(x);
    case opcode::tanh: return std::tanh(x);
    case opcode::exp: return std::exp(x);
    case opcode::log: return std::log(x);
    default: return std::sqrt(x);
  }
}

template <class T>
void check_accuracy(am::detail::cpu_isa isa) {
  constexpr auto dt = am::dtype_of<T>();
  for (auto op : {opcode::sin, opcode::cos, opcode::tanh, opcode::exp, opcode::log, opcode::sqrt}) {
    auto xs = arguments<T>(op);
    am::program_builder b("math");
    b.output(b.unary(op, b.parameter({dt, {static_cast<std::int64_t>(xs.size())}})));
    am::detail::compile_options o;
    o.isa = isa;
    auto got = from_bytes<T>(run_direct(*b.build(), {to_bytes(xs)}, o)[0]);
    double worst = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      auto want = static_cast<double>(reference(op, static_cast<long double>(xs[i])));
      double e = ulps(got[i], want);
      INFO(am::detail::isa_name(isa) << ' ' << am::name(dt) << ' ' << am::opcode_name(op) << '(' << xs[i] << ") = "
                                     << got[i] << ", want " << want);
      CHECK(e <= (op == opcode::sqrt ? 0.5 : 3.5));
      worst = std::max(worst, e);
    }
  }
}

template <class T>
void check_specials(am::detail::cpu_isa isa) {
  constexpr auto dt = am::dtype_of<T>();
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> xs{T(0), T(-0.0), inf, -inf, nan, T(-1)};
  am::detail::compile_options o;
  o.isa = isa;
  auto run = [&](opcode op) {
    am::program_builder b("specials");
    b.output(b.unary(op, b.parameter({dt, {6}})));
    return from_bytes<T>(run_direct(*b.build(), {to_bytes(xs)}, o)[0]);
  };
  auto s = run(opcode::sin), c = run(opcode::cos), t = run(opcode::tanh), e = run(opcode::exp),
       l = run(opcode::log), q = run(opcode::sqrt);
  INFO(am::detail::isa_name(isa) << ' ' << am::name(dt));
  CHECK((s[0] == 0 && std::isnan(s[2]) && std::isnan(s[4])));
  CHECK((c[0] == 1 && std::isnan(c[3])));
  CHECK((t[2] == 1 && t[3] == -1 && std::isnan(t[4])));
  CHECK((e[0] == 1 && e[2] == inf && e[3] == 0 && std::isnan(e[4])));
  CHECK((l[0] == -inf && l[2] == inf && std::isnan(l[5]) && std::isnan(l[4])));
  CHECK((q[0] == 0 && std::signbit(q[1]) && q[2] == inf && std::isnan(q[5])));
}

} // namespace

TEST_CASE("float32 and float64 transcendentals stay within 3.5 ULP on every instruction set", "[cpu][math]") {
  for (auto isa : {am::detail::cpu_isa::scalar, am::detail::cpu_isa::avx2, am::detail::cpu_isa::avx512}) {
    if (!am::detail::isa_supported(isa))
      continue;
    check_accuracy<float>(isa);
    check_accuracy<double>(isa);
    check_specials<float>(isa);
    check_specials<double>(isa);
  }
}

TEST_CASE("float32 power stays within 1 ULP", "[cpu][math]") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> base(0.01f, 20.0f), expo(-8.0f, 8.0f);
  std::vector<float> a, b;
  for (int i = 0; i < 3000; ++i) {
    a.push_back(base(rng));
    b.push_back(expo(rng));
  }
  for (auto isa : {am::detail::cpu_isa::scalar, am::detail::cpu_isa::avx2, am::detail::cpu_isa::avx512}) {
    if (!am::detail::isa_supported(isa))
      continue;
    am::program_builder pb("pow");
    auto x = pb.parameter({am::dtype::float32, {3000}});
    pb.output(pb.binary(opcode::power, x, pb.parameter({am::dtype::float32, {3000}})));
    am::detail::compile_options o;
    o.isa = isa;
    auto got = from_bytes<float>(run_direct(*pb.build(), {to_bytes(a), to_bytes(b)}, o)[0]);
    for (std::size_t i = 0; i < a.size(); ++i)
      CHECK(ulps(got[i], static_cast<double>(std::pow(static_cast<long double>(a[i]), static_cast<long double>(b[i]))))
            <= 1.0);
  }
}
