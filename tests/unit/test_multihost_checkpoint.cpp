// Checkpoints in one process: .npy headers byte for byte as numpy writes them, round trips
// across shardings, and incomplete or damaged checkpoints refused on restore.
#include "multihost/detail/npy.hpp"

#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

namespace fs = std::filesystem;
namespace mh = am::multihost;
using am::host_array;

namespace {

struct npy_case {
  am::dtype type;
  host_array::shape_type shape;
  std::string header;
};

/// A fresh directory under /tmp, removed at the end of the test.
struct temp_dir {
  fs::path path;
  temp_dir() {
    char tmpl[] = "/tmp/am_checkpoint_test_XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~temp_dir() { fs::remove_all(path); }
  std::string str(const std::string& sub = "ck") const { return (path / sub).string(); }
};

am::options eight_devices() {
  am::options o;
  o.cpu_devices = 8;
  return o;
}

} // namespace

TEST_CASE("multihost: .npy headers are numpy's, byte for byte", "[unit][multihost]") {
  const std::vector<npy_case> cases{
#include "test_multihost_npy_headers.inc"
  };
  for (auto& c : cases) {
    INFO(am::name(c.type) << " of rank " << c.shape.size());
    CHECK(am::detail::npy_header(c.type, c.shape) == c.header);
  }
}

TEST_CASE("multihost: a checkpoint restores onto other shardings with the same values", "[unit][multihost]") {
  am::runtime rt(eight_devices());
  temp_dir dir;
  am::mesh m42({4, 2}, am::devices(), {"x", "y"});
  auto w = host_array::arange(48, am::dtype::float32).reshape({8, 6});
  auto b = host_array::arange(0, 8, 1, am::dtype::bfloat16);
  std::map<std::string, am::array> params{
      {"w", am::device_put(w, am::make_named_sharding(m42, am::P("x", "y")))},
      {"b", am::device_put(b, am::make_named_sharding(m42, am::P(std::vector<std::string>{"x", "y"})))}};
  auto tree = std::make_tuple(params, host_array::zeros({0, 2}, am::dtype::int32), true);
  mh::save_checkpoint(dir.str(), tree);
  CHECK(mh::checkpoint_exists(dir.str()));
  CHECK(fs::exists(dir.path / "ck" / "index.json"));
  // One file per distinct block: 8 for w (4x2 tiles), 8 for b, one each for the host values.
  CHECK(std::distance(fs::directory_iterator(dir.path / "ck" / "1"), fs::directory_iterator{}) == 8);
  // A block file is a numpy file of the block.
  auto block = am::detail::read_npy((dir.path / "ck" / "1" / "2-4_3-6.npy").string(), am::dtype::float32, {2, 3});
  CHECK(am::array_identical(block, w.slice({{2, 4, 1}, {3, 6, 1}})));

  am::mesh m8({8}, am::devices(), {"d"});
  am::sharding_ptr rows = am::make_named_sharding(m8, am::P("d"));
  am::sharding_ptr rep = am::make_named_sharding(m8, am::P());
  am::sharding_ptr cols = am::make_named_sharding(am::mesh({2, 4}, am::devices(), {"a", "b"}), am::P(am::none, "a"));
  std::map<std::string, am::sharding_ptr> targets{{"w", cols}, {"b", rows}};
  auto [p, empty, flag] = mh::restore_checkpoint(dir.str(), std::make_tuple(targets, rep, rep));
  CHECK(am::array_identical(p.at("w").to_host(), w));
  CHECK(p.at("w").sharding() == cols);
  CHECK(p.at("w").addressable_shards()[0].index == am::shard_index{{0, 8}, {0, 3}});
  CHECK(am::array_identical(p.at("b").to_host(), b));
  CHECK(empty.shape() == am::shape_t{0, 2});
  CHECK(flag.to_host().item<bool>());
}

TEST_CASE("multihost: an incomplete or damaged checkpoint is refused on restore", "[unit][multihost]") {
  am::runtime rt(eight_devices());
  temp_dir dir;
  am::mesh m({8}, am::devices(), {"d"});
  am::sharding_ptr s = am::make_named_sharding(m, am::P("d"));
  auto x = am::device_put(host_array::arange(16, am::dtype::int64), s);
  mh::save_checkpoint(dir.str(), std::make_tuple(x));
  auto target = std::make_tuple(s);
  CHECK(am::array_identical(std::get<0>(mh::restore_checkpoint(dir.str(), target)).to_host(), host_array::arange(16)));

  SECTION("a save that stopped before its index (a .tmp index left behind) never looks complete") {
    fs::rename(dir.path / "ck" / "index.json", dir.path / "ck" / "index.json.tmp");
    CHECK_FALSE(mh::checkpoint_exists(dir.str()));
    CHECK_THROWS_WITH(mh::restore_checkpoint(dir.str(), target),
                      "restore_checkpoint: " + dir.str() + " holds no complete checkpoint (index.json is missing: its "
                      "save did not finish)");
  }
  SECTION("saving again removes the old index before the new blocks are written") {
    // A save that fails half-way (here: a block file cannot be created) leaves no index behind.
    fs::remove_all(dir.path / "ck" / "0");
    std::ofstream(dir.path / "ck" / "0") << "a file where the leaf's folder should be";
    CHECK_THROWS_AS(mh::save_checkpoint(dir.str(), std::make_tuple(x)), am::runtime_error);
    CHECK_FALSE(mh::checkpoint_exists(dir.str()));
  }
  SECTION("a truncated block") {
    fs::resize_file(dir.path / "ck" / "0" / "4-6.npy", 140);
    CHECK_THROWS_WITH(mh::restore_checkpoint(dir.str(), target),
                      "The checkpoint file " + dir.str() + "/0/4-6.npy is truncated");
  }
  SECTION("a missing block") {
    fs::remove(dir.path / "ck" / "0" / "4-6.npy");
    CHECK_THROWS_WITH(mh::restore_checkpoint(dir.str(), target),
                      "The checkpoint file " + dir.str() + "/0/4-6.npy is missing");
  }
  SECTION("another structure") {
    CHECK_THROWS_WITH(mh::restore_checkpoint(dir.str(), std::make_tuple(s, s)),
                      "restore_checkpoint: the checkpoint holds a tree of structure PyTreeDef((*,)), but the "
                      "shardings have structure PyTreeDef((*, *))");
  }
  SECTION("a damaged index") {
    std::ofstream(dir.path / "ck" / "index.json") << "{\"format\": ";
    CHECK_THROWS_WITH(mh::restore_checkpoint(dir.str(), target),
                      "restore_checkpoint: " + dir.str() + "/index.json is not valid JSON");
  }
  SECTION("an index with a field missing or of another type names the field") {
    const auto index = dir.path / "ck" / "index.json";
    std::ifstream in(index);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto with = [&](const std::string& from, const std::string& to) {
      auto changed = text;
      const auto at = changed.find(from);
      REQUIRE(at != std::string::npos);
      changed.replace(at, from.size(), to);
      std::ofstream(index, std::ios::trunc) << changed;
    };
    with("\"shape\":", "\"shapes\":");
    CHECK_THROWS_WITH(mh::restore_checkpoint(dir.str(), target), "checkpoint index: missing field 'shape'");
    with("\"shape\":[16]", "\"shape\":\"16\"");
    CHECK_THROWS_WITH(mh::restore_checkpoint(dir.str(), target), "checkpoint index: shape must be an array");
    with("\"shape\":[16]", "\"shape\":[16.5]");
    CHECK_THROWS_WITH(mh::restore_checkpoint(dir.str(), target), "checkpoint index: shape must be an integer");
    with("\"shape\":[16]", "\"shape\":[18446744073709551615]");
    CHECK_THROWS_WITH(mh::restore_checkpoint(dir.str(), target), "checkpoint index: shape must be an integer");
    with("\"version\":1", "\"version\":\"1\"");
    CHECK_THROWS_WITH(mh::restore_checkpoint(dir.str(), target), "checkpoint index: version must be an integer");
  }
}
