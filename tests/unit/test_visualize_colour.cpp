// The coloured sharding picture against JAX's own (tests/data/jax_visualize_colour.jsonl, written by
// tools/gen_jax_visualize_colour.py from jax.debug.visualize_sharding on a truecolor terminal):
// byte for byte, escape sequences included; and the plain picture stays plain by default.
#include "actormesh/sharding/named_sharding.hpp"
#include "actormesh/sharding/visualize.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <string>
#include <vector>
#include "support/build_paths.hpp"

using namespace am;

namespace {

/// JAX's PartitionSpec entry as the table writes it: null, an axis name, or a list of names.
spec_entry colour_case_entry(const nlohmann::json& e) {
  if (e.is_null())
    return spec_entry(none);
  if (e.is_string())
    return spec_entry(e.get<std::string>());
  return spec_entry(e.get<std::vector<std::string>>());
}

std::vector<nlohmann::json> colour_cases() {
  std::ifstream in(am::testing::source_dir() + "/tests/data/jax_visualize_colour.jsonl");
  REQUIRE(in.good());
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      out.push_back(nlohmann::json::parse(line));
  return out;
}

} // namespace

TEST_CASE("visualize in colour: every case of JAX's table, byte for byte", "[visualize]") {
  const auto cases = colour_cases();
  REQUIRE(cases.size() >= 10);
  for (const auto& c : cases) {
    const auto shape = c.at("shape").get<std::vector<std::int64_t>>();
    const auto mesh_shape = c.at("mesh").get<std::vector<std::int64_t>>();
    std::vector<spec_entry> entries;
    for (const auto& e : c.at("spec"))
      entries.push_back(colour_case_entry(e));
    mesh m(mesh_shape, virtual_cpu_devices(c.at("devices").get<int>()), c.at("axes").get<std::vector<std::string>>());
    const auto s = make_named_sharding(m, partition_spec(entries));
    visualize_options coloured;
    coloured.use_color = true;
    INFO("shape " << c.at("shape").dump() << " mesh " << c.at("mesh").dump() << " spec " << c.at("spec").dump());
    CHECK(visualize_sharding(shape, *s, coloured) == c.at("picture").get<std::string>());
    // Without the option the picture is plain: borders, no escape sequence.
    const auto plain = visualize_sharding(shape, *s);
    CHECK(plain.find('\x1b') == std::string::npos);
    CHECK(plain.rfind("┌", 0) == 0);
  }
}

TEST_CASE("visualize in colour: neighbours differ and the text reads on its background", "[visualize]") {
  mesh m({4, 2}, virtual_cpu_devices(8), {"x", "y"});
  visualize_options coloured;
  coloured.use_color = true;
  const auto picture = visualize_sharding({8, 4}, *make_named_sharding(m, P("x", "y")), coloured);
  // Eight cells, eight backgrounds.
  std::set<std::string> backgrounds;
  for (std::size_t at = picture.find(";48;2;"); at != std::string::npos; at = picture.find(";48;2;", at + 1))
    backgrounds.insert(picture.substr(at, picture.find('m', at) - at));
  CHECK(backgrounds.size() == 8);
  // tab20b's light entries (e7cb94) get black text, the dark ones white.
  CHECK(picture.find("\x1b[38;2;0;0;0;48;2;231;203;148m") != std::string::npos);
  CHECK(picture.find("\x1b[38;2;255;255;255;48;2;57;59;121m") != std::string::npos);
}
