// The bytes actor meshes send between processes: values (actors/value_wire.hpp) round trip for
// every supported type and refuse malformed input; calls and answers (actor_mesh/detail/actor_wire)
// round trip, refuse truncation, oversized fields and random bytes, and rebuild exceptions by type.
#include <actormesh.hpp>

#include "actor_mesh/detail/actor_wire.hpp"
#include "actor_mesh/detail/worker_meshes.hpp"
#include "support/cpu_options.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace {

enum class color : std::uint8_t { red = 1, green = 2 };

struct sample {
  std::string name;
  std::vector<int> counts;
  std::optional<double> weight;
  color tint = color::red;
  bool operator==(const sample&) const = default;
};

template <class Inspector>
bool inspect(Inspector& f, sample& s) {
  return f(s.name, s.counts, s.weight, s.tint);
}

template <class T>
T round_trip(const T& value) {
  am::detail::wire_writer w;
  am::detail::write_value(w, value);
  auto bytes = w.take();
  am::detail::wire_reader r(bytes);
  auto back = am::detail::read_value<T>(r);
  r.finish();
  return back;
}

template <class T>
std::string encoded(const T& value) {
  am::detail::wire_writer w;
  am::detail::write_value(w, value);
  return w.take();
}

} // namespace

TEST_CASE("values of every supported type travel unchanged", "[actor_wire]") {
  CHECK(round_trip(true) == true);
  CHECK(round_trip(std::int8_t{-5}) == -5);
  CHECK(round_trip(std::uint64_t{1} << 63) == std::uint64_t{1} << 63);
  CHECK(round_trip(-2.5f) == -2.5f);
  CHECK(round_trip(1e300) == 1e300);
  CHECK(round_trip(color::green) == color::green);
  CHECK(round_trip(std::string("with\0nul", 8)) == std::string("with\0nul", 8));
  CHECK(round_trip(std::vector<std::string>{"a", "", "ccc"}) == std::vector<std::string>{"a", "", "ccc"});
  CHECK(round_trip(std::array<int, 3>{1, 2, 3}) == std::array<int, 3>{1, 2, 3});
  std::map<std::string, std::vector<double>> m{{"x", {1, 2}}, {"y", {}}};
  CHECK(round_trip(m) == m);
  std::unordered_map<int, std::string> u{{1, "one"}, {2, "two"}};
  CHECK(round_trip(u) == u);
  CHECK(round_trip(std::set<int>{3, 1, 2}) == std::set<int>{1, 2, 3});
  CHECK(round_trip(std::pair<int, std::string>{7, "seven"}) == std::pair<int, std::string>{7, "seven"});
  CHECK(round_trip(std::tuple<int, bool, std::string>{1, false, "z"}) == std::tuple<int, bool, std::string>{1, false, "z"});
  CHECK(round_trip(std::optional<int>{}) == std::nullopt);
  CHECK(round_trip(std::optional<int>{4}) == 4);
  sample s{"probe", {1, 2, 3}, 0.5, color::green};
  CHECK(round_trip(s) == s);
  CHECK(round_trip(std::vector<sample>{s, sample{}}) == std::vector<sample>{s, sample{}});
  auto a = am::host_array::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  auto b = round_trip(a);
  CHECK(b.dtype() == am::dtype::float32);
  CHECK(b.shape() == std::vector<std::int64_t>{2, 3});
  CHECK(b.to_vector<float>() == a.to_vector<float>());
  CHECK(round_trip(am::host_array::zeros({0, 4})).shape() == std::vector<std::int64_t>{0, 4});
  STATIC_REQUIRE(am::detail::travels<sample>);
  STATIC_REQUIRE_FALSE(am::detail::travels<std::unique_ptr<int>>);
  STATIC_REQUIRE_FALSE(am::detail::travels<std::function<void()>>);
  STATIC_REQUIRE(am::detail::travels<am::array>); // as its data (sharding/detail/array_wire.hpp)
}

TEST_CASE("an array travels as its data and arrives on this process's first device outside an actor",
          "[actor_wire]") {
  am::runtime rt(am::test::cpu_options(2));
  auto x = am::device_put(am::host_array::from_vector(std::vector<float>{1, 2, 3}), am::devices().at(1));
  auto y = round_trip(x);
  CHECK(y.addressable_shards().at(0).device.id == am::local_devices().at(0).id);
  CHECK(y.to_host().to_vector<float>() == std::vector<float>{1, 2, 3});
  CHECK(y.dtype() == am::dtype::float32);
  // A malformed encoding is refused before anything reaches a device.
  auto bytes = encoded(x);
  am::detail::wire_reader r(std::string_view(bytes).substr(0, bytes.size() - 1));
  CHECK_THROWS_AS(am::detail::read_value<am::array>(r), am::value_error);
}

TEST_CASE("malformed values are refused with am::value_error, allocating nothing unbounded", "[actor_wire]") {
  auto bytes = encoded(std::vector<std::string>{"abc", "def"});
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    am::detail::wire_reader r(std::string_view(bytes).substr(0, cut));
    CHECK_THROWS_AS(am::detail::read_value<std::vector<std::string>>(r), am::value_error);
  }
  // A count of 2^62 elements with nothing after it: the first read fails.
  am::detail::wire_writer w;
  w.u64(std::uint64_t{1} << 62);
  auto huge = w.take();
  am::detail::wire_reader r(huge);
  CHECK_THROWS_AS(am::detail::read_value<std::vector<std::int64_t>>(r), am::value_error);
  // Trailing bytes are refused by finish().
  auto extra = encoded(5) + "x";
  am::detail::wire_reader t(extra);
  am::detail::read_value<int>(t);
  CHECK_THROWS_AS(t.finish(), am::value_error);
}

TEST_CASE("a host array whose shape does not match its bytes is refused before anything is allocated", "[actor_wire]") {
  auto forge = [](std::uint8_t dtype, std::vector<std::uint64_t> dims, std::string data) {
    am::detail::wire_writer w;
    w.u8(dtype);
    w.u32(static_cast<std::uint32_t>(dims.size()));
    for (auto d : dims)
      w.u64(d);
    w.str(data);
    return w.take();
  };
  auto read = [](const std::string& bytes) {
    am::detail::wire_reader r(bytes);
    return am::detail::read_value<am::host_array>(r);
  };
  CHECK_THROWS_WITH(read(forge(6, {std::uint64_t{1} << 40, std::uint64_t{1} << 40}, "")), Catch::Contains("does not match"));
  CHECK_THROWS_WITH(read(forge(6, {3}, std::string(8, '\0'))), Catch::Contains("does not match"));
  CHECK_THROWS_WITH(read(forge(6, {std::uint64_t(-1)}, std::string(8, '\0'))), Catch::Contains("does not match"));
  CHECK_THROWS_WITH(read(forge(99, {1}, std::string(4, '\0'))), Catch::Contains("dtype"));
  CHECK_THROWS_WITH(read(forge(6, std::vector<std::uint64_t>(65, 1), std::string(4, '\0'))), Catch::Contains("rank"));
  CHECK(read(forge(6, {2}, std::string(8, '\0'))).shape() == std::vector<std::int64_t>{2});
}

TEST_CASE("calls and answers between gateways round trip and refuse malformed bytes", "[actor_wire]") {
  using namespace am::detail;
  actor_call call{"trainer#3", 5, "step", 42, std::string("\x01\x02\x00", 3)};
  auto back = decode_call(encode_call(call));
  CHECK(back.mesh == call.mesh);
  CHECK(back.rank == 5);
  CHECK(back.endpoint == "step");
  CHECK(back.request == 42);
  CHECK(back.arguments == call.arguments);
  auto bytes = encode_call(call);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut)
    CHECK_THROWS_AS(decode_call(std::string_view(bytes).substr(0, cut)), am::value_error);
  CHECK_THROWS_AS(decode_call(bytes + "!"), am::value_error);
  CHECK_THROWS_AS(decode_call(encode_call(actor_call{std::string(5000, 'k'), 0, "e", 1, ""})), am::value_error);
  CHECK_THROWS_AS(decode_call(encode_call(actor_call{"m", -1, "e", 1, ""})), am::value_error);

  actor_answer ok{9, true, "value", "", ""};
  auto a = decode_answer(encode_answer(ok));
  CHECK(a.ok);
  CHECK(a.value == "value");
  auto answer_bytes = encode_answer(ok);
  answer_bytes[8] = 2; // the flag must be 0 or 1
  CHECK_THROWS_AS(decode_answer(answer_bytes), am::value_error);

  std::mt19937_64 random(20261206);
  for (int i = 0; i < 2000; ++i) {
    std::string junk(random() % 64, '\0');
    for (auto& c : junk)
      c = static_cast<char>(random());
    try {
      decode_call(junk);
    } catch (const am::value_error&) {
    }
    try {
      decode_answer(junk);
    } catch (const am::value_error&) {
    }
  }
}

TEST_CASE("a forwarded supervision event round trips, and truncated, mistyped and random ones are refused",
          "[actor_wire]") {
  using namespace am::detail;
  am::supervision_event e;
  e.what = am::supervision_event::kind::restarted;
  e.class_name = "trainer";
  e.rank = 3;
  e.coords = {1, 1};
  e.point = "{host: 1, device: 1}";
  e.process = 1;
  e.cause = "am::actor_fault: broken";
  auto bytes = encode_event(e);
  auto back = decode_event(bytes);
  CHECK(back.what == e.what);
  CHECK(back.class_name == e.class_name);
  CHECK(back.rank == 3);
  CHECK(back.coords == e.coords);
  CHECK(back.point == e.point);
  CHECK(back.process == 1);
  CHECK(back.cause == e.cause);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut)
    CHECK_THROWS_AS(decode_event(bytes.substr(0, cut)), am::value_error);
  CHECK_THROWS_AS(decode_event(bytes + "x"), am::value_error);
  auto wrong_kind = bytes;
  wrong_kind[0] = 9; // the kind comes first; there are four
  CHECK_THROWS_WITH(decode_event(wrong_kind), Catch::Contains("kind 9"));
  std::mt19937_64 random(20261207);
  for (int i = 0; i < 2000; ++i) {
    std::string junk(random() % 96, '\0');
    for (auto& c : junk)
      c = static_cast<char>(random());
    try {
      decode_event(junk);
    } catch (const am::value_error&) {
    }
  }
}

TEST_CASE("an error answer rebuilds actormesh's and the standard exceptions as themselves", "[actor_wire]") {
  using namespace am::detail;
  auto through = [](std::exception_ptr e) { return rebuild_error(decode_answer(encode_answer(error_answer(1, e))), 3); };
  CHECK_THROWS_AS(std::rethrow_exception(through(std::make_exception_ptr(am::value_error("v")))), am::value_error);
  CHECK_THROWS_WITH(std::rethrow_exception(through(std::make_exception_ptr(am::value_error("v: with colon")))), "v: with colon");
  CHECK_THROWS_AS(std::rethrow_exception(through(std::make_exception_ptr(am::actor_fault("f")))), am::actor_fault);
  CHECK_THROWS_AS(std::rethrow_exception(through(std::make_exception_ptr(std::out_of_range("o")))), std::out_of_range);
  try {
    std::rethrow_exception(through(std::make_exception_ptr(am::actor_failure_error("gone", 7))));
    FAIL("no exception");
  } catch (const am::actor_failure_error& e) {
    CHECK(e.rank() == 3); // the caller's rank
    CHECK(std::string(e.what()) == "gone");
  }
  struct own_error : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  try {
    std::rethrow_exception(through(std::make_exception_ptr(own_error("mine"))));
    FAIL("no exception");
  } catch (const am::remote_error& e) {
    CHECK(std::string(e.what()) == "mine");
    CHECK(e.type_name().find("own_error") != std::string::npos);
  }
  try {
    std::rethrow_exception(through(std::make_exception_ptr(17)));
    FAIL("no exception");
  } catch (const am::remote_error& e) {
    CHECK(e.type_name() == "int");
  }
}
