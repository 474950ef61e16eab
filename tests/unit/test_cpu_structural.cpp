// Sources, structural operations, reductions and dot on every dtype against host references, through
// a CPU device of the runtime.
#include "cpu_test_support.hpp"

#include <cstdint>
#include <numeric>
#include <string>
#include <tuple>

using namespace cpu_test;
using am::opcode;

namespace {

/// Small integers (exact in every dtype) as T.
template <class T>
std::vector<T> values(std::int64_t n, int salt = 0) {
  std::vector<T> out;
  for (std::int64_t i = 0; i < n; ++i) {
    auto v = static_cast<std::int64_t>((i * 7 + salt * 3) % 11) - 4;
    if constexpr (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, bool>)
      v = v < 0 ? -v : v;
    out.push_back(am::convert_element<T>(v));
  }
  return out;
}

std::vector<std::int64_t> strides_of(const am::shape_t& s) {
  std::vector<std::int64_t> st(s.size(), 1);
  for (auto d = static_cast<int>(s.size()) - 2; d >= 0; --d)
    st[static_cast<std::size_t>(d)] = st[static_cast<std::size_t>(d) + 1] * s[static_cast<std::size_t>(d) + 1];
  return st;
}

/// Multi-index of a linear index.
std::vector<std::int64_t> unravel(std::int64_t i, const am::shape_t& s) {
  std::vector<std::int64_t> idx(s.size());
  for (auto d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
    idx[static_cast<std::size_t>(d)] = i % s[static_cast<std::size_t>(d)];
    i /= s[static_cast<std::size_t>(d)];
  }
  return idx;
}

template <class T>
void check_same(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO(what << " at " << i << ": got " << static_cast<double>(got[i]) << ", want " << static_cast<double>(want[i]));
    CHECK(same_value<T>(got[i], want[i]));
  }
}

template <class T>
void check_sources_and_structure(const am::device& d) {
  constexpr am::dtype dt = am::dtype_of<T>();
  std::string dn(am::name(dt));
  { // iota, constant
    am::program_builder b("sources");
    b.output(b.iota({dt, {3, 4}}));
    b.output(b.constant(2.5, {dt, {2, 2}}));
    auto out = run_on(d, b.build(), {});
    std::vector<T> iota;
    for (std::int64_t i = 0; i < 12; ++i)
      iota.push_back(am::convert_element<T>(i));
    check_same(from_bytes<T>(out[0]), iota, dn + " iota");
    check_same(from_bytes<T>(out[1]), std::vector<T>(4, am::convert_element<T>(2.5)), dn + " constant");
  }
  { // broadcast_in_dim in several patterns
    struct pattern {
      am::shape_t from, to;
      std::vector<std::int64_t> dims;
    };
    for (auto& pt : {pattern{{3}, {2, 3}, {1}}, pattern{{3}, {3, 2}, {0}}, pattern{{}, {2, 3}, {}},
                     pattern{{1, 3}, {4, 3}, {0, 1}}, pattern{{2, 1, 3}, {2, 4, 3}, {0, 1, 2}},
                     pattern{{2, 3}, {2, 5, 3}, {0, 2}}}) {
      am::program_builder b("broadcast");
      b.output(b.broadcast_in_dim(b.parameter({dt, pt.from}), pt.to, pt.dims));
      auto in = values<T>(am::element_count(pt.from));
      auto got = from_bytes<T>(run_on(d, b.build(), {to_bytes(in)})[0]);
      auto in_strides = strides_of(pt.from);
      std::vector<T> want;
      for (std::int64_t i = 0; i < am::element_count(pt.to); ++i) {
        auto idx = unravel(i, pt.to);
        std::int64_t src = 0;
        for (std::size_t k = 0; k < pt.dims.size(); ++k)
          if (pt.from[k] != 1)
            src += idx[static_cast<std::size_t>(pt.dims[k])] * in_strides[k];
        want.push_back(in[static_cast<std::size_t>(src)]);
      }
      check_same(got, want, dn + " broadcast");
    }
  }
  { // transpose, slice
    am::shape_t s{2, 3, 4};
    auto in = values<T>(24);
    am::program_builder b("transpose_slice");
    auto x = b.parameter({dt, s});
    b.output(b.transpose(x, {2, 0, 1}));
    b.output(b.slice(x, {0, 1, 1}, {2, 3, 3}));
    auto out = run_on(d, b.build(), {to_bytes(in)});
    std::vector<T> tr, sl;
    for (std::int64_t k = 0; k < 4; ++k)
      for (std::int64_t i = 0; i < 2; ++i)
        for (std::int64_t j = 0; j < 3; ++j)
          tr.push_back(in[static_cast<std::size_t>(i * 12 + j * 4 + k)]);
    for (std::int64_t i = 0; i < 2; ++i)
      for (std::int64_t j = 1; j < 3; ++j)
        for (std::int64_t k = 1; k < 3; ++k)
          sl.push_back(in[static_cast<std::size_t>(i * 12 + j * 4 + k)]);
    check_same(from_bytes<T>(out[0]), tr, dn + " transpose");
    check_same(from_bytes<T>(out[1]), sl, dn + " slice");
  }
  { // concatenate on both axes
    auto a = values<T>(6, 1), c = values<T>(2, 2), e = values<T>(4, 3);
    am::program_builder b("concatenate");
    auto xa = b.parameter({dt, {2, 3}});
    auto xc = b.parameter({dt, {2, 1}});
    auto xe = b.parameter({dt, {2, 2}});
    b.output(b.concatenate({xa, xc, xe}, 1));
    b.output(b.concatenate({xa, xa}, 0));
    auto out = run_on(d, b.build(), {to_bytes(a), to_bytes(c), to_bytes(e)});
    std::vector<T> want1, want0 = a;
    for (std::size_t r = 0; r < 2; ++r) {
      want1.insert(want1.end(), a.begin() + static_cast<long>(r * 3), a.begin() + static_cast<long>(r * 3 + 3));
      want1.push_back(c[r]);
      want1.insert(want1.end(), e.begin() + static_cast<long>(r * 2), e.begin() + static_cast<long>(r * 2 + 2));
    }
    want0.insert(want0.end(), a.begin(), a.end());
    check_same(from_bytes<T>(out[0]), want1, dn + " concatenate axis 1");
    check_same(from_bytes<T>(out[1]), want0, dn + " concatenate axis 0");
  }
}

/// The reference reduction, accumulating as documented (wrapping integers, float for 16-bit floats).
template <class T>
std::vector<T> wrapping_reference_reduce(opcode op, const std::vector<T>& in, const am::shape_t& s,
                                const std::vector<std::int64_t>& axes) {
  am::shape_t kept;
  for (std::size_t d = 0; d < s.size(); ++d)
    if (std::find(axes.begin(), axes.end(), static_cast<std::int64_t>(d)) == axes.end())
      kept.push_back(s[d]);
  auto kept_strides = strides_of(kept);
  std::vector<double> acc(static_cast<std::size_t>(am::element_count(kept)),
                          op == opcode::reduce_sum ? 0.0 : op == opcode::reduce_max ? -INFINITY : INFINITY);
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(in.size()); ++i) {
    auto idx = unravel(i, s);
    std::int64_t o = 0, k = 0;
    for (std::size_t dd = 0; dd < s.size(); ++dd)
      if (std::find(axes.begin(), axes.end(), static_cast<std::int64_t>(dd)) == axes.end())
        o += idx[dd] * kept_strides[static_cast<std::size_t>(k++)];
    double v = static_cast<double>(in[static_cast<std::size_t>(i)]);
    auto& a = acc[static_cast<std::size_t>(o)];
    a = op == opcode::reduce_sum ? a + v : op == opcode::reduce_max ? std::max(a, v) : std::min(a, v);
  }
  std::vector<T> out;
  for (double a : acc) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      out.push_back(static_cast<T>(static_cast<std::int64_t>(a))); // small values: exact, then wrapped
    else
      out.push_back(am::convert_element<T>(a));
  }
  return out;
}

template <class T>
void check_reductions(const am::device& d) {
  constexpr am::dtype dt = am::dtype_of<T>();
  am::shape_t s{3, 4, 5};
  auto in = values<T>(60);
  for (auto op : {opcode::reduce_sum, opcode::reduce_max, opcode::reduce_min}) {
    for (auto& axes : std::vector<std::vector<std::int64_t>>{{0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1, 2}, {}}) {
      am::program_builder b("reduce");
      b.output(b.reduce(op, b.parameter({dt, s}), axes));
      auto got = from_bytes<T>(run_on(d, b.build(), {to_bytes(in)})[0]);
      check_same(got, wrapping_reference_reduce(op, in, s, axes),
                 std::string(am::name(dt)) + " " + std::string(am::opcode_name(op)) + " over "
                   + std::to_string(axes.size()) + " axes");
    }
  }
}

template <class T>
void check_dot(const am::device& d, std::int64_t m, std::int64_t k, std::int64_t n) {
  constexpr am::dtype dt = am::dtype_of<T>();
  auto a = values<T>(m * k, 1), b = values<T>(k * n, 2);
  am::program_builder pb("dot");
  auto x = pb.parameter({dt, {m, k}});
  pb.output(pb.dot(x, pb.parameter({dt, {k, n}})));
  auto got = from_bytes<T>(run_on(d, pb.build(), {to_bytes(a), to_bytes(b)})[0]);
  std::vector<T> want;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      std::int64_t acc = 0; // small integers: exact in every accumulator
      for (std::int64_t q = 0; q < k; ++q)
        acc += am::convert_element<std::int64_t>(static_cast<T>(a[static_cast<std::size_t>(i * k + q)]))
               * am::convert_element<std::int64_t>(static_cast<T>(b[static_cast<std::size_t>(q * n + j)]));
      if constexpr (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int32_t>)
        want.push_back(static_cast<T>(acc)); // wraps like the device's accumulator
      else
        want.push_back(am::convert_element<T>(acc));
    }
  check_same(got, want, std::string(am::name(dt)) + " dot " + std::to_string(m) + "x" + std::to_string(k) + "x"
                          + std::to_string(n));
}

template <class... T>
void for_types(const am::device& d) {
  (check_sources_and_structure<T>(d), ...);
  (check_reductions<T>(d), ...);
  (check_dot<T>(d, 3, 4, 5), ...);
  (check_dot<T>(d, 6, 9, 300), ...); // row and column blocks with remainders
}

} // namespace

TEST_CASE("sources, structural ops, reductions and dot match host references on every dtype", "[cpu][structural]") {
  am::runtime rt(small_runtime());
  for_types<bool, std::uint8_t, std::int32_t, std::int64_t, am::float16, am::bfloat16, float, double>(am::devices()[0]);
}

TEST_CASE("reshape is a zero-copy view of its operand", "[cpu][structural]") {
  am::runtime rt(small_runtime());
  auto d = am::devices()[0];
  am::program_builder b("reshape");
  auto x = b.parameter({am::dtype::int32, {2, 6}});
  b.output(b.reshape(x, {3, 4}));
  b.output(b.reshape(b.reshape(x, {12}), {4, 3}));
  auto in = am::upload(d, to_bytes(values<std::int32_t>(12)), {am::dtype::int32, {2, 6}});
  auto outs = am::execute(d, b.build(), {in});
  auto r0 = outs[0].get(10s), r1 = outs[1].get(10s);
  CHECK(r0->shape() == am::shape_t{3, 4});
  CHECK(r1->shape() == am::shape_t{4, 3});
  CHECK(r0->data() == in.get(10s)->data());
  CHECK(r1->data() == in.get(10s)->data());
  CHECK(from_bytes<std::int32_t>(am::fetch(d, outs[1]).get(10s)) == values<std::int32_t>(12));
}

TEST_CASE("reductions: NaN propagates through max/min, integer sums wrap, empty reductions", "[cpu][structural]") {
  am::runtime rt(small_runtime());
  auto d = am::devices()[0];
  am::program_builder b("nan");
  auto x = b.parameter({am::dtype::float32, {2, 3}});
  b.output(b.reduce(opcode::reduce_max, x, {1}));
  b.output(b.reduce(opcode::reduce_min, x, {0}));
  auto out = run_on(d, b.build(), {to_bytes(std::vector<float>{1, NAN, 3, 4, 5, 6})});
  auto mx = from_bytes<float>(out[0]), mn = from_bytes<float>(out[1]);
  CHECK(std::isnan(mx[0]));
  CHECK(mx[1] == 6);
  CHECK(mn[0] == 1);
  CHECK(std::isnan(mn[1]));
  CHECK(mn[2] == 3);

  am::program_builder w("wrap");
  w.output(w.reduce(opcode::reduce_sum, w.parameter({am::dtype::int32, {2}}), {0}));
  w.output(w.reduce(opcode::reduce_sum, w.parameter({am::dtype::uint8, {2}}), {0}));
  auto wv = run_on(d, w.build(), {to_bytes(std::vector<std::int32_t>{INT32_MAX, 1}),
                                   to_bytes(std::vector<std::uint8_t>{200, 100})});
  CHECK(from_bytes<std::int32_t>(wv[0])[0] == INT32_MIN);
  CHECK(from_bytes<std::uint8_t>(wv[1])[0] == 44);

  am::program_builder e("empty");
  auto z = e.parameter({am::dtype::float32, {0, 3}});
  e.output(e.reduce(opcode::reduce_sum, z, {0}));
  e.output(e.reduce(opcode::reduce_max, z, {0}));
  auto ev = run_on(d, e.build(), {{}});
  CHECK(from_bytes<float>(ev[0]) == std::vector<float>(3, 0.0f));
  CHECK(from_bytes<float>(ev[1]) == std::vector<float>(3, -INFINITY));
}

TEST_CASE("float32 dot of a larger product agrees with a double reference", "[cpu][structural]") {
  am::runtime rt(small_runtime());
  auto d = am::devices()[0];
  const std::int64_t m = 37, k = 300, n = 261;
  std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = std::sin(static_cast<float>(i));
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = std::cos(static_cast<float>(i) * 0.5f);
  am::program_builder pb("dot");
  auto x = pb.parameter({am::dtype::float32, {m, k}});
  pb.output(pb.dot(x, pb.parameter({am::dtype::float32, {k, n}})));
  auto got = from_bytes<float>(run_on(d, pb.build(), {to_bytes(a), to_bytes(b)})[0]);
  double worst = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (std::int64_t q = 0; q < k; ++q)
        acc += double(a[static_cast<std::size_t>(i * k + q)]) * b[static_cast<std::size_t>(q * n + j)];
      worst = std::max(worst, std::fabs(acc - got[static_cast<std::size_t>(i * n + j)]));
    }
  CHECK(worst < 1e-3);
}
