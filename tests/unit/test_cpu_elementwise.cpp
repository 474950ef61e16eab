// Every elementwise opcode on every dtype against a straightforward host reference: through the
// runtime (a CPU device) and through the compiler directly with every instruction set this CPU has.
#include "cpu_test_support.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <tuple>

using namespace cpu_test;
using am::opcode;

namespace {

template <class T>
std::vector<T> samples() {
  if constexpr (std::is_same_v<T, bool>) {
    return {false, true};
  } else if constexpr (std::is_same_v<T, std::uint8_t>) {
    return {0, 1, 2, 3, 7, 100, 128, 200, 255};
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return {0, 1, -1, 2, -2, 7, -13, 100, -1000, INT32_MAX, INT32_MIN};
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return {0, 1, -1, 2, -2, 7, -13, 100, -1000, std::int64_t{1} << 40, INT64_MAX, INT64_MIN};
  } else {
    std::vector<double> v{0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.75, 100.0, -1e-3, 0.1, 7e3, NAN, INFINITY, -INFINITY};
    std::vector<T> out;
    for (double x : v)
      out.push_back(static_cast<T>(x));
    return out;
  }
}

template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T> || std::is_same_v<T, am::float16>
                            || std::is_same_v<T, am::bfloat16>;

template <class T>
constexpr bool is_half_v = std::is_same_v<T, am::float16> || std::is_same_v<T, am::bfloat16>;

/// Two's-complement wrap of a wide integer into T.
template <class T>
T wrap(__int128 v) {
  return static_cast<T>(static_cast<std::uint64_t>(static_cast<unsigned __int128>(v)));
}

/// The reference of a one-operand op: as numpy computes it (floats in their own precision, 16-bit
/// floats through float, integers exactly and wrapped, integer transcendentals through double).
template <class T>
double reference_unary(opcode op, T x) {
  if constexpr (is_float_v<T>) {
    using F = std::conditional_t<is_half_v<T>, float, T>;
    using L = std::conditional_t<std::is_same_v<T, double>, long double, double>; // exact enough
    F a = static_cast<F>(x);
    auto round = [](auto v) { return static_cast<double>(static_cast<T>(static_cast<F>(v))); };
    switch (op) {
      case opcode::neg: return round(-a);
      case opcode::abs: return round(std::fabs(a));
      case opcode::square: return round(a * a);
      case opcode::sin: return is_half_v<T> ? round(std::sin(a)) : static_cast<double>(static_cast<T>(std::sin(static_cast<L>(a))));
      case opcode::cos: return is_half_v<T> ? round(std::cos(a)) : static_cast<double>(static_cast<T>(std::cos(static_cast<L>(a))));
      case opcode::tanh: return is_half_v<T> ? round(std::tanh(a)) : static_cast<double>(static_cast<T>(std::tanh(static_cast<L>(a))));
      case opcode::exp: return is_half_v<T> ? round(std::exp(a)) : static_cast<double>(static_cast<T>(std::exp(static_cast<L>(a))));
      case opcode::log: return is_half_v<T> ? round(std::log(a)) : static_cast<double>(static_cast<T>(std::log(static_cast<L>(a))));
      case opcode::sqrt: return round(std::sqrt(a));
      default: FAIL("not unary");
    }
  } else {
    using W = __int128;
    W a = std::is_same_v<T, bool> ? W(x ? 1 : 0) : W(x);
    auto back = [](W v) { return static_cast<double>(std::is_same_v<T, bool> ? T(v != 0) : wrap<T>(v)); };
    auto through_double = [](double v) { return static_cast<double>(am::convert_element<T>(v)); };
    switch (op) {
      case opcode::neg: return back(-a);
      case opcode::abs: return back(a < 0 ? -a : a);
      case opcode::square: return back(a * a);
      case opcode::sin: return through_double(std::sin(double(a)));
      case opcode::cos: return through_double(std::cos(double(a)));
      case opcode::tanh: return through_double(std::tanh(double(a)));
      case opcode::exp: return through_double(std::exp(double(a)));
      case opcode::log: return through_double(std::log(double(a)));
      case opcode::sqrt: return through_double(std::sqrt(double(a)));
      default: FAIL("not unary");
    }
  }
  return 0;
}

template <class T>
double reference_binary(opcode op, T x, T y) {
  if constexpr (is_float_v<T>) {
    using F = std::conditional_t<is_half_v<T>, float, T>;
    F a = static_cast<F>(x), b = static_cast<F>(y);
    auto round = [](F v) { return static_cast<double>(static_cast<T>(v)); };
    switch (op) {
      case opcode::add: return round(a + b);
      case opcode::subtract: return round(a - b);
      case opcode::multiply: return round(a * b);
      case opcode::divide: return round(a / b);
      case opcode::maximum: return std::isnan(a) || std::isnan(b) ? NAN : round(a >= b ? a : b);
      case opcode::minimum: return std::isnan(a) || std::isnan(b) ? NAN : round(a <= b ? a : b);
      case opcode::power:
        return is_half_v<T> ? round(std::pow(a, b))
                            : static_cast<double>(static_cast<T>(std::pow(static_cast<long double>(a), static_cast<long double>(b))));
      default: FAIL("not binary");
    }
  } else {
    using W = __int128;
    W a = std::is_same_v<T, bool> ? W(x ? 1 : 0) : W(x), b = std::is_same_v<T, bool> ? W(y ? 1 : 0) : W(y);
    auto back = [](W v) { return static_cast<double>(std::is_same_v<T, bool> ? T(v != 0) : wrap<T>(v)); };
    switch (op) {
      case opcode::add: return back(a + b);
      case opcode::subtract: return back(a - b);
      case opcode::multiply: return back(a * b);
      case opcode::divide: return back(b == 0 ? 0 : a / b);
      case opcode::maximum: return back(a > b ? a : b);
      case opcode::minimum: return back(a < b ? a : b);
      case opcode::power: {
        if (b < 0)
          return back(a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0);
        W r = 1;
        for (W k = 0; k < b; ++k)
          r = static_cast<W>(static_cast<std::int64_t>(wrap<std::int64_t>(r * a)));
        return back(r);
      }
      default: FAIL("not binary");
    }
  }
  return 0;
}

template <class T>
bool reference_compare(opcode op, T x, T y) {
  auto a = static_cast<double>(x), b = static_cast<double>(y);
  if constexpr (std::is_same_v<T, std::int64_t>) { // beyond double's exact range
    switch (op) {
      case opcode::equal: return x == y;
      case opcode::not_equal: return x != y;
      case opcode::less: return x < y;
      case opcode::less_equal: return x <= y;
      case opcode::greater: return x > y;
      default: return x >= y;
    }
  }
  switch (op) {
    case opcode::equal: return a == b;
    case opcode::not_equal: return a != b;
    case opcode::less: return a < b;
    case opcode::less_equal: return a <= b;
    case opcode::greater: return a > b;
    default: return a >= b;
  }
}

/// True when `got` matches `want` (exactly, or within 4 ULP for float transcendentals and power).
template <class T>
bool matches(opcode op, T got, double want) {
  bool approximate = (op >= opcode::sin && op <= opcode::log) || op == opcode::power;
  if constexpr (is_float_v<T>) {
    if (approximate)
      return ulps(got, want) <= (is_half_v<T> ? 1.0 : 4.0);
    double g = static_cast<double>(got);
    if (std::isnan(g) || std::isnan(want))
      return std::isnan(g) && std::isnan(want);
    return g == want && std::signbit(g) == std::signbit(want);
  } else {
    return static_cast<double>(got) == want;
  }
}

/// The runs to check: the runtime, then the compiler with every supported instruction set.
template <class F>
void for_each_path(const am::device& d, const std::shared_ptr<const am::program>& p,
                   const std::vector<std::vector<std::byte>>& inputs, F&& check) {
  check("runtime", run_on(d, p, inputs)[0]);
  for (auto isa : {am::detail::cpu_isa::scalar, am::detail::cpu_isa::avx2, am::detail::cpu_isa::avx512}) {
    if (!am::detail::isa_supported(isa))
      continue;
    am::detail::compile_options o;
    o.isa = isa;
    check(std::string(am::detail::isa_name(isa)), run_direct(*p, inputs, o)[0]);
  }
}

template <class T>
void check_dtype(const am::device& d) {
  constexpr am::dtype dt = am::dtype_of<T>();
  auto xs = samples<T>();
  std::vector<T> a, b;
  for (auto x : xs)
    for (auto y : xs) {
      a.push_back(x);
      b.push_back(y);
    }
  auto n = static_cast<std::int64_t>(a.size());
  am::value_type t{dt, {n}};
  auto inputs1 = std::vector<std::vector<std::byte>>{to_bytes(xs)};
  auto inputs2 = std::vector<std::vector<std::byte>>{to_bytes(a), to_bytes(b)};
  for (auto op : {opcode::neg, opcode::abs, opcode::square, opcode::sin, opcode::cos, opcode::tanh, opcode::exp,
                  opcode::log, opcode::sqrt}) {
    am::program_builder pb(std::string(am::opcode_name(op)));
    pb.output(pb.unary(op, pb.parameter({dt, {static_cast<std::int64_t>(xs.size())}})));
    for_each_path(d, pb.build(), inputs1, [&](const std::string& path, const std::vector<std::byte>& bytes) {
      auto got = from_bytes<T>(bytes);
      for (std::size_t i = 0; i < xs.size(); ++i) {
        INFO(am::name(dt) << ' ' << am::opcode_name(op) << '(' << static_cast<double>(xs[i]) << ") via " << path
                          << ": got " << static_cast<double>(got[i]) << ", want " << reference_unary<T>(op, xs[i]));
        CHECK(matches<T>(op, got[i], reference_unary<T>(op, xs[i])));
      }
    });
  }
  for (auto op : {opcode::add, opcode::subtract, opcode::multiply, opcode::divide, opcode::maximum,
                  opcode::minimum, opcode::power}) {
    am::program_builder pb(std::string(am::opcode_name(op)));
    auto x = pb.parameter(t);
    pb.output(pb.binary(op, x, pb.parameter(t)));
    for_each_path(d, pb.build(), inputs2, [&](const std::string& path, const std::vector<std::byte>& bytes) {
      auto got = from_bytes<T>(bytes);
      for (std::size_t i = 0; i < a.size(); ++i) {
        if constexpr (!is_float_v<T>)
          if (op == opcode::power && (b[i] > 9 || b[i] < -2))
            continue; // the reference multiplies b times
        INFO(am::name(dt) << ' ' << am::opcode_name(op) << '(' << static_cast<double>(a[i]) << ", "
                          << static_cast<double>(b[i]) << ") via " << path << ": got " << static_cast<double>(got[i])
                          << ", want " << reference_binary<T>(op, a[i], b[i]));
        CHECK(matches<T>(op, got[i], reference_binary<T>(op, a[i], b[i])));
      }
    });
  }
  for (auto op : {opcode::equal, opcode::not_equal, opcode::less, opcode::less_equal, opcode::greater,
                  opcode::greater_equal}) {
    am::program_builder pb(std::string(am::opcode_name(op)));
    auto x = pb.parameter(t);
    auto c = pb.binary(op, x, pb.parameter(t));
    REQUIRE(pb.type_of(c).dtype == am::dtype::bool_);
    pb.output(c);
    for_each_path(d, pb.build(), inputs2, [&](const std::string& path, const std::vector<std::byte>& bytes) {
      auto got = from_bytes<std::uint8_t>(bytes);
      for (std::size_t i = 0; i < a.size(); ++i) {
        INFO(am::name(dt) << ' ' << am::opcode_name(op) << " via " << path << " at " << i);
        CHECK(got[i] == (reference_compare<T>(op, a[i], b[i]) ? 1 : 0));
      }
    });
  }
  // select: alternate predicate
  am::program_builder pb("select");
  auto x = pb.parameter(t);
  auto y = pb.parameter(t);
  auto pred = pb.parameter({am::dtype::bool_, {n}});
  pb.output(pb.select(pred, x, y));
  std::vector<bool> p;
  for (std::int64_t i = 0; i < n; ++i)
    p.push_back(i % 3 == 0);
  auto inputs3 = inputs2;
  inputs3.push_back(to_bytes(p));
  for_each_path(d, pb.build(), inputs3, [&](const std::string& path, const std::vector<std::byte>& bytes) {
    auto got = from_bytes<T>(bytes);
    for (std::size_t i = 0; i < a.size(); ++i) {
      INFO(am::name(dt) << " select via " << path << " at " << i);
      CHECK(same_value<T>(got[i], p[i] ? a[i] : b[i]));
    }
  });
}

template <class From, class To>
void check_convert(const am::device& d) {
  auto xs = samples<From>();
  am::program_builder pb("convert");
  pb.output(pb.convert(pb.parameter({am::dtype_of<From>(), {static_cast<std::int64_t>(xs.size())}}), am::dtype_of<To>()));
  for_each_path(d, pb.build(), {to_bytes(xs)}, [&](const std::string& path, const std::vector<std::byte>& bytes) {
    auto got = from_bytes<To>(bytes);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      INFO(am::name(am::dtype_of<From>()) << " -> " << am::name(am::dtype_of<To>()) << " of "
                                          << static_cast<double>(xs[i]) << " via " << path);
      CHECK(same_value<To>(got[i], am::convert_element<To>(static_cast<From>(xs[i]))));
    }
  });
}

using all_types = std::tuple<bool, std::uint8_t, std::int32_t, std::int64_t, am::float16, am::bfloat16, float, double>;

template <class From, std::size_t... I>
void convert_to_all(const am::device& d, std::index_sequence<I...>) {
  (check_convert<From, std::tuple_element_t<I, all_types>>(d), ...);
}

} // namespace

TEST_CASE("every elementwise opcode matches the host reference on every dtype", "[cpu][elementwise]") {
  am::runtime rt(small_runtime());
  auto d = am::devices()[0];
  check_dtype<bool>(d);
  check_dtype<std::uint8_t>(d);
  check_dtype<std::int32_t>(d);
  check_dtype<std::int64_t>(d);
  check_dtype<am::float16>(d);
  check_dtype<am::bfloat16>(d);
  check_dtype<float>(d);
  check_dtype<double>(d);
}

TEST_CASE("convert between every pair of dtypes follows am::convert_element", "[cpu][elementwise]") {
  am::runtime rt(small_runtime());
  auto d = am::devices()[1];
  auto idx = std::make_index_sequence<std::tuple_size_v<all_types>>{};
  convert_to_all<bool>(d, idx);
  convert_to_all<std::uint8_t>(d, idx);
  convert_to_all<std::int32_t>(d, idx);
  convert_to_all<std::int64_t>(d, idx);
  convert_to_all<am::float16>(d, idx);
  convert_to_all<am::bfloat16>(d, idx);
  convert_to_all<float>(d, idx);
  convert_to_all<double>(d, idx);
}

TEST_CASE("documented corner cases: integer division, NaN propagation, float16 rounding", "[cpu][elementwise]") {
  am::runtime rt(small_runtime());
  auto d = am::devices()[0];
  am::value_type ti{am::dtype::int32, {4}};
  am::program_builder b("corners");
  auto x = b.parameter(ti);
  auto y = b.parameter(ti);
  b.output(b.binary(opcode::divide, x, y));
  auto out = run_on(d, b.build(), {to_bytes(std::vector<std::int32_t>{7, -7, INT32_MIN, 5}),
                                    to_bytes(std::vector<std::int32_t>{2, 2, -1, 0})});
  CHECK(from_bytes<std::int32_t>(out[0]) == std::vector<std::int32_t>{3, -3, INT32_MIN, 0});

  am::value_type tf{am::dtype::float32, {3}};
  am::program_builder m("nan");
  auto p = m.parameter(tf);
  auto q = m.parameter(tf);
  m.output(m.binary(opcode::maximum, p, q));
  m.output(m.binary(opcode::minimum, p, q));
  auto mm = run_on(d, m.build(), {to_bytes(std::vector<float>{NAN, 1, 2}), to_bytes(std::vector<float>{1, NAN, 3})});
  auto mx = from_bytes<float>(mm[0]);
  auto mn = from_bytes<float>(mm[1]);
  CHECK((std::isnan(mx[0]) && std::isnan(mx[1]) && mx[2] == 3));
  CHECK((std::isnan(mn[0]) && std::isnan(mn[1]) && mn[2] == 2));

  // float16: 2049 is not representable (rounds to even 2048), 1/3 rounds to 0x3555, 65520 overflows.
  am::value_type th{am::dtype::float16, {3}};
  am::program_builder h("half");
  auto hx = h.parameter(th);
  auto hy = h.parameter(th);
  h.output(h.binary(opcode::add, hx, hy));
  h.output(h.binary(opcode::divide, hx, hy));
  auto hv = run_on(d, h.build(), {to_bytes(std::vector<am::float16>{am::float16(2048.0), am::float16(1.0), am::float16(65504.0)}),
                                   to_bytes(std::vector<am::float16>{am::float16(1.0), am::float16(3.0), am::float16(32.0)})});
  auto sum = from_bytes<am::float16>(hv[0]);
  auto quo = from_bytes<am::float16>(hv[1]);
  CHECK(sum[0].bits() == am::float16(2048.0).bits());
  CHECK(quo[1].bits() == 0x3555);
  CHECK(sum[2].bits() == 0x7c00);
  // bfloat16: 1 + 2^-8 rounds to even (1.0); 1 + 3 * 2^-8 rounds up to 1 + 2^-6.
  am::value_type tb{am::dtype::bfloat16, {2}};
  am::program_builder bb("bf16");
  auto bx = bb.parameter(tb);
  auto by = bb.parameter(tb);
  bb.output(bb.binary(opcode::add, bx, by));
  auto bv = from_bytes<am::bfloat16>(run_on(d, bb.build(), {
    to_bytes(std::vector<am::bfloat16>{am::bfloat16(1.0f), am::bfloat16(1.0f)}),
    to_bytes(std::vector<am::bfloat16>{am::bfloat16(0.00390625f), am::bfloat16(0.01171875f)})})[0]);
  CHECK(static_cast<float>(bv[0]) == 1.0f);
  CHECK(static_cast<float>(bv[1]) == 1.015625f);
}
