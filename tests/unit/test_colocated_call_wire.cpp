// The bytes of a colocated call to a worker (colocated/detail/call_wire, sharding/detail/
// sharding_codec): every field round-trips (named, positional and single-device shardings, dict
// keys, an object's constructor), and bytes a hostile or broken peer could send (every truncation,
// random flips, unknown devices, absurd sizes) are refused with am::value_error, never a crash.
#include <actormesh.hpp>

#include "actormesh/actors/wire_codec.hpp"
#include "colocated/detail/call_wire.hpp"
#include "sharding/detail/sharding_codec.hpp"

#include <catch2/catch.hpp>

#include <random>
#include "support/cpu_options.hpp"

namespace {

am::detail::worker_call sample_call() {
  auto devs = am::devices();
  am::mesh m(am::create_device_mesh({2, 2}, devs), {"x", "y"});
  am::shape_dtype_struct a{{8, 4}, am::dtype::float32, am::make_named_sharding(m, am::P("x", am::none))};
  am::shape_dtype_struct b{{6}, am::dtype::int32, std::make_shared<const am::single_device_sharding>(devs[1])};
  am::shape_dtype_struct c{{4, 2}, am::dtype::bfloat16,
                           std::make_shared<const am::positional_sharding>(am::device_grid({2, 2}, devs))};
  am::shape_dtype_struct d{{4, 4}, am::dtype::uint8, am::make_named_sharding(m, am::P(am::spec_entry{"x", "y"}))};
  auto dict = am::tree_def::node(am::tree_def::kind::dict, {am::tree_def::leaf(), am::tree_def::leaf()}, {"k1", "k2"});
  auto def = am::tree_def::node(am::tree_def::kind::tuple,
                                {am::tree_def::leaf(), dict, am::tree_def::node(am::tree_def::kind::list, {am::tree_def::leaf()})});
  am::detail::worker_call call;
  call.kind = am::detail::worker_call_kind::async;
  call.name = "method.add";
  call.is_method = true;
  call.object = {42, "probe.counter", "constructor-key", std::string("\0args\xff", 6)};
  call.in = am::spec_tree(def, {a, b, c, d});
  for (auto& dv : devs)
    call.devices.push_back(dv.id);
  call.out = am::spec_tree(a);
  return call;
}

} // namespace

TEST_CASE("colocated call wire: a call round-trips with every sharding kind and tree node", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(4));
  auto call = sample_call();
  auto back = am::detail::decode_worker_call(am::detail::encode(call));
  CHECK(back.kind == call.kind);
  CHECK(back.name == call.name);
  CHECK(back.is_method);
  CHECK(back.object.uid == 42);
  CHECK(back.object.class_name == "probe.counter");
  CHECK(back.object.constructor == "constructor-key");
  CHECK(back.object.arguments == call.object.arguments);
  CHECK(back.in == call.in); // structure, shapes, dtypes and layouts on the same devices
  CHECK(back.in.def().to_string() == call.in.def().to_string());
  for (std::size_t k = 0; k < call.in.leaves().size(); ++k)
    CHECK(back.in.leaves()[k].sharding->to_string() == call.in.leaves()[k].sharding->to_string());
  CHECK(back.devices == call.devices);
  CHECK(back.out == call.out);
  auto specs = am::detail::decode_specs(am::detail::encode_specs(call.in));
  CHECK(specs == call.in);
}

TEST_CASE("colocated call wire: every truncation and random corruption is refused with value_error",
          "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(4));
  auto bytes = am::detail::encode(sample_call());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    INFO("truncated to " << n << " of " << bytes.size());
    CHECK_THROWS_AS(am::detail::decode_worker_call(bytes.substr(0, n)), am::value_error);
  }
  CHECK_THROWS_AS(am::detail::decode_worker_call(bytes + "x"), am::value_error);
  std::mt19937 rng(7);
  int refused = 0, accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    auto broken = bytes;
    for (int flips = 0; flips < 3; ++flips)
      broken[rng() % broken.size()] = static_cast<char>(rng());
    try {
      am::detail::decode_worker_call(broken);
      ++accepted; // a flip in a name or a byte string is still a well-formed call
    } catch (const am::value_error&) {
      ++refused;
    }
  }
  CHECK(refused > 0);
  CHECK(refused + accepted == 3000);
}

TEST_CASE("colocated call wire: shardings naming unknown devices or absurd grids are refused", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(2));
  {
    am::detail::wire_writer w;
    w.u8(1); // single device
    w.i32(99);
    auto bytes = w.take(); // the reader views it
    am::detail::wire_reader r(bytes);
    CHECK_THROWS_WITH(am::detail::read_sharding(r), Catch::Contains("no device with id 99"));
  }
  {
    am::detail::wire_writer w;
    w.u8(2); // positional: a grid of 2^16 x 2^16 devices
    w.u64(2);
    w.u64(1u << 16);
    w.u64(1u << 16);
    w.i32_list({0, 1});
    auto bytes = w.take(); // the reader views it
    am::detail::wire_reader r(bytes);
    CHECK_THROWS_AS(am::detail::read_sharding(r), am::value_error);
  }
  {
    am::detail::wire_writer w;
    w.u8(3); // named: a grid of 2 devices with axis names that do not match its rank
    w.u64(1);
    w.u64(2);
    w.i32_list({0, 1});
    w.u64(2);
    w.str("x");
    w.str("y");
    w.u64(0);
    auto bytes = w.take(); // the reader views it
    am::detail::wire_reader r(bytes);
    CHECK_THROWS_AS(am::detail::read_sharding(r), am::value_error);
  }
  {
    am::detail::wire_writer w;
    w.u8(9);
    auto bytes = w.take(); // the reader views it
    am::detail::wire_reader r(bytes);
    CHECK_THROWS_WITH(am::detail::read_sharding(r), Catch::Contains("unknown kind 9"));
  }
}
