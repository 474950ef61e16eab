// Golden pictures of visualize_array_sharding: every expected string below was drawn by rich with the
// settings JAX's visualize_sharding uses (no colour), and the seed-001 ones agree with the seed's
// pictures. Each picture is followed by the empty line REFERENCE.md specifies. The seed's pictures that
// test_array_pictures.cpp checks too live in support/seed_pictures.hpp.
#include "actormesh/sharding/named_sharding.hpp"
#include "actormesh/sharding/positional_sharding.hpp"
#include "actormesh/sharding/sharding_errors.hpp"
#include "actormesh/sharding/single_device_sharding.hpp"
#include "actormesh/sharding/visualize.hpp"

#include "support/seed_pictures.hpp"

#include <catch2/catch.hpp>

using namespace am;
using am::testing::pictures::as_drawn;
namespace pictures = am::testing::pictures;

namespace {

const std::vector<std::int64_t> big{8192, 8192};

// The seed's TPU device order: mesh_utils.create_device_mesh((8,)) on a TPU v3-8.
std::vector<device> tpu_order() {
  const auto d = virtual_cpu_devices(8);
  std::vector<device> out;
  for (int i : {0, 1, 2, 3, 6, 7, 4, 5})
    out.push_back(d[static_cast<std::size_t>(i)]);
  return out;
}

visualize_options tpu() {
  visualize_options o;
  o.platform = "TPU";
  return o;
}

} // namespace

TEST_CASE("visualize: 4x2 TPU grid of the seed, device order 0,1,2,3,6,7,4,5", "[visualize]") {
  const std::string& expected = pictures::grid_4x2_tpu;
  // As the seed builds it: a mesh over the devices in topology order.
  mesh m(create_device_mesh({4, 2}, tpu_order()), {"a", "b"});
  CHECK(visualize_array_sharding(big, named_sharding(m, P("a", "b")), tpu()) == expected);
  // The same picture from a plain mesh, relabelling device ids through the options.
  mesh plain({4, 2}, virtual_cpu_devices(8), {"a", "b"});
  auto relabel = tpu();
  relabel.device_ids = {0, 1, 2, 3, 6, 7, 4, 5};
  CHECK(visualize_array_sharding(big, named_sharding(plain, P("a", "b")), relabel) == expected);
  // And from PositionalSharding(devices).reshape(4, 2).
  CHECK(visualize_array_sharding(big, positional_sharding(tpu_order()).reshape({4, 2}), tpu()) == expected);
}

TEST_CASE("visualize: an unsharded 8192x8192 array on one device", "[visualize]") {
  CHECK(visualize_array_sharding(big, single_device_sharding(virtual_cpu_devices(1)[0]), tpu()) ==
        pictures::single_tpu_0);
}

TEST_CASE("visualize: PositionalSharding reshaped to 8x1 and 1x8", "[visualize]") {
  positional_sharding s(tpu_order());
  CHECK(visualize_array_sharding(big, s.reshape({8, 1}), tpu()) == pictures::rows_8_tpu);
  CHECK(visualize_array_sharding(big, s.reshape({1, 8}), tpu()) == pictures::cols_8_tpu);
}

TEST_CASE("visualize: PositionalSharding replicate(0) and replicate(1)", "[visualize]") {
  auto s = positional_sharding(tpu_order()).reshape({4, 2});
  CHECK(visualize_array_sharding(big, s.replicate(0), tpu()) == pictures::cols_2_tpu);
  CHECK(visualize_array_sharding(big, s.replicate(1), tpu()) == pictures::rows_4_pairs_tpu);
}

TEST_CASE("visualize: NamedSharding pictures of the seed", "[visualize]") {
  mesh m(create_device_mesh({4, 2}, tpu_order()), {"a", "b"});
  auto draw = [&](const partition_spec& spec) { return visualize_array_sharding(big, named_sharding(m, spec), tpu()); };
  CHECK(draw(P("b", "a")) == pictures::grid_2x4_tpu);
  CHECK(draw(P("a", none)) == pictures::rows_4_pairs_tpu);
  CHECK(draw(P("a")) == pictures::rows_4_pairs_tpu);
  CHECK(draw(P(none, "b")) == pictures::cols_2_tpu);
  CHECK(draw(P(none, "a")) == pictures::cols_4_pairs_tpu);
  CHECK(draw(P(std::vector<std::string>{"a", "b"}, none)) == pictures::rows_8_tpu);
}

TEST_CASE("visualize: REFERENCE.md's (8, 2) examples: base width 2, heights 2 and 5", "[visualize]") {
  mesh m({4, 2}, virtual_cpu_devices(8), {"x", "y"});
  CHECK(visualize_array_sharding({8, 2}, named_sharding(m, P("x", "y"))) == as_drawn(R"PIC(┌───────┬───────┐
│ CPU 0 │ CPU 1 │
├───────┼───────┤
│ CPU 2 │ CPU 3 │
├───────┼───────┤
│ CPU 4 │ CPU 5 │
├───────┼───────┤
│ CPU 6 │ CPU 7 │
└───────┴───────┘
)PIC"));
  CHECK(visualize_array_sharding({8, 2}, named_sharding(m, P("y"))) == as_drawn(R"PIC(┌───────────┐
│           │
│CPU 0,2,4,6│
│           │
│           │
├───────────┤
│           │
│CPU 1,3,5,7│
│           │
│           │
└───────────┘
)PIC"));
}

TEST_CASE("visualize: 1-D arrays: one row of cells of height 1", "[visualize]") {
  mesh m8({8}, virtual_cpu_devices(8), {"x"});
  CHECK(visualize_array_sharding({8}, named_sharding(m8, P("x"))) == pictures::row_8_cpu_1d);
  CHECK(visualize_array_sharding({8}, named_sharding(m8, P())) == as_drawn(R"PIC(┌───────────────────┐
│CPU 0,1,2,3,4,5,6,7│
└───────────────────┘
)PIC"));
  mesh m2({2}, virtual_cpu_devices(2), {"x"});
  CHECK(visualize_array_sharding({2}, named_sharding(m2, P("x"))) == as_drawn(R"PIC(┌───────┬───────┐
│ CPU 0 │ CPU 1 │
└───────┴───────┘
)PIC"));
  CHECK(visualize_array_sharding({1}, single_device_sharding(virtual_cpu_devices(1)[0])) == as_drawn(R"PIC(┌───────────────────────┐
│         CPU 0         │
└───────────────────────┘
)PIC"));
  mesh m42({4, 2}, virtual_cpu_devices(8), {"x", "y"});
  CHECK(visualize_array_sharding({4}, named_sharding(m42, P("x"))) == as_drawn(R"PIC(┌───────┬───────┬───────┬───────┐
│CPU 0,1│CPU 2,3│CPU 4,5│CPU 6,7│
└───────┴───────┴───────┴───────┘
)PIC"));
}

TEST_CASE("visualize: the platform label defaults to the devices' own", "[visualize]") {
  mesh m({2}, virtual_cpu_devices(2), {"x"});
  const auto picture = visualize_array_sharding({2}, named_sharding(m, P("x")));
  CHECK(picture.find("CPU 0") != std::string::npos);
  auto gpu = virtual_cpu_devices(2);
  for (auto& d : gpu)
    d.platform = platform::cuda;
  CHECK(visualize_array_sharding({2}, named_sharding(mesh({2}, gpu, {"x"}), P("x"))).find("GPU 1") != std::string::npos);
}

TEST_CASE("visualize: the picture ends with the border's newline, as JAX's, an empty line on request",
          "[visualize]") {
  mesh m({2}, virtual_cpu_devices(2), {"x"});
  const std::string picture = R"PIC(┌───────┬───────┐
│ CPU 0 │ CPU 1 │
└───────┴───────┘
)PIC";
  CHECK(visualize_array_sharding({2}, named_sharding(m, P("x"))) == picture);
  visualize_options o;
  o.trailing_empty_line = true;
  CHECK(visualize_array_sharding({2}, named_sharding(m, P("x")), o) == picture + "\n");
}

TEST_CASE("visualize: only rank 1 and 2 can be drawn", "[visualize]") {
  mesh m({4, 2}, virtual_cpu_devices(8), {"x", "y"});
  named_sharding s(m, P("x", "y"));
  const std::string message = "`visualize_sharding` only works for shapes with 1 and 2 dimensions.";
  CHECK_THROWS_MATCHES(visualize_array_sharding({8, 2, 2}, s), value_error, Catch::Matchers::Message(message));
  CHECK_THROWS_MATCHES(visualize_array_sharding({}, named_sharding(m, P())), value_error,
                       Catch::Matchers::Message(message));
}

TEST_CASE("visualize: the sharding's own errors come through", "[visualize]") {
  mesh m({4, 2}, virtual_cpu_devices(8), {"x", "y"});
  CHECK_THROWS_AS(visualize_array_sharding({6, 2}, named_sharding(m, P("x"))), indivisible_error);
  CHECK_THROWS_AS(visualize_array_sharding({8}, named_sharding(m, P("x", "y"))), value_error);
}

TEST_CASE("visualize: cells too wide for 80 columns shrink like rich's table but keep their labels", "[visualize]") {
  // JAX/rich draw this frame with empty cells; we draw the same frame and keep the labels.
  mesh m({1, 8}, virtual_cpu_devices(8), {"x", "y"});
  const auto picture = visualize_array_sharding({8, 1024}, named_sharding(m, P("x", "y")));
  CHECK(picture.rfind("┌─────────┬─────────┬─────────┬─────────┬─────────┬─────────┬─────────┬────────┐\n", 0) == 0);
  CHECK(picture.find("│  CPU 0  │  CPU 1  │  CPU 2  │  CPU 3  │  CPU 4  │  CPU 5  │  CPU 6  │ CPU 7  │\n") !=
        std::string::npos);
  // 16 cells of a 1-D array: columns of width 4 and 3, labels wrapped onto two lines.
  mesh m16({16}, virtual_cpu_devices(16), {"x"});
  const auto wrapped = visualize_array_sharding({16}, named_sharding(m16, P("x")));
  CHECK(wrapped.find("│CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU│CPU │\n") !=
        std::string::npos);
  CHECK(wrapped.find("│ 0  │ 1  │ 2  │ 3  │ 4  │ 5  │ 6  │ 7  │ 8  │ 9  │ 10 │ 11 │ 12 │ 13 │14 │ 15 │\n") !=
        std::string::npos);
}
