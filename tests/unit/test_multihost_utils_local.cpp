// The multihost utilities in one process (local mode), the local mesh and its subcube check on
// made-up multi-process meshes, and the CRC-32 sync_global_devices compares.
#include "multihost/detail/crc32.hpp"

#include <actormesh.hpp>
#include "actormesh/sharding/sharding_errors.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace mh = am::multihost;
using am::host_array;

namespace {

am::options four_devices() {
  am::options o;
  o.cpu_devices = 4;
  return o;
}

/// `count` CPU devices, `per_process` of them per process, ids in order.
std::vector<am::device> cluster_devices(int count, int per_process) {
  std::vector<am::device> out;
  for (int i = 0; i < count; ++i)
    out.push_back({i, i / per_process, am::platform::cpu, i % per_process});
  return out;
}

} // namespace

TEST_CASE("multihost: CRC-32 is zlib's", "[unit][multihost]") {
  // zlib.crc32 in Python
  CHECK(am::detail::crc32("hello") == 907060870u);
  CHECK(am::detail::crc32("test message") == 529295243u);
  CHECK(am::detail::crc32("test message2") == 1621125314u);
  CHECK(am::detail::crc32("") == 0u);
}

TEST_CASE("multihost: in one process broadcast copies and keeps dtypes", "[unit][multihost]") {
  am::runtime rt(four_devices());
  auto x = host_array::arange(4, am::dtype::uint8);
  auto [a, s, m] = mh::broadcast_one_to_all(std::make_tuple(x, 2.5f, std::map<std::string, bool>{{"k", true}}));
  CHECK(am::array_identical(a, x));
  CHECK_FALSE(a.shares_memory_with(x));
  CHECK(s == 2.5f);
  CHECK(m.at("k"));
  // A global (fully addressable) array comes back as a host array.
  am::mesh mesh({4}, am::devices(), {"x"});
  auto g = am::device_put(host_array::arange(8, am::dtype::int32), am::make_named_sharding(mesh, am::P("x")));
  host_array h = mh::broadcast_one_to_all(g);
  CHECK(am::array_identical(h, host_array::arange(8, am::dtype::int32)));
}

TEST_CASE("multihost: in one process allgather stacks on a new axis or keeps the shape", "[unit][multihost]") {
  am::runtime rt(four_devices());
  auto x = host_array::arange(6, am::dtype::float32).reshape({2, 3});
  auto stacked = mh::process_allgather(x);
  CHECK(stacked.shape() == host_array::shape_type{1, 2, 3});
  CHECK(am::array_equal(stacked.reshape({2, 3}), x));
  CHECK(mh::process_allgather(x, true).shape() == host_array::shape_type{2, 3});
  // A scalar always becomes shape (P,), tiled or not (JAX keeps it 0-d for tiled=True in one process).
  CHECK(mh::process_allgather(7, true).shape() == host_array::shape_type{1});
  CHECK(mh::process_allgather(7).to_vector<std::int32_t>() == std::vector<std::int32_t>{7});
  auto empty = mh::process_allgather(std::vector<host_array>{});
  CHECK(empty.empty());
}

TEST_CASE("multihost: in one process assert_equal and sync_global_devices pass", "[unit][multihost]") {
  am::runtime rt(four_devices());
  mh::assert_equal(std::make_tuple(host_array::arange(3), 1.0, std::numeric_limits<double>::quiet_NaN()), "one process");
  mh::sync_global_devices("alone");
  SUCCEED("no error");
}

TEST_CASE("multihost: in one process the host-local array is the global array", "[unit][multihost]") {
  am::runtime rt(four_devices());
  am::mesh mesh({2, 2}, am::devices(), {"a", "b"});
  auto local = host_array::arange(16, am::dtype::int64).reshape({4, 4});
  auto g = mh::host_local_array_to_global_array(local, mesh, am::P("a", "b"));
  CHECK(g.is_fully_addressable());
  CHECK(g.shape() == am::shape_t{4, 4});
  CHECK(am::array_identical(g.to_host(), local));
  CHECK(g.addressable_shards().size() == 4);
  // Fully addressable input to the inverse is returned as is.
  auto back = mh::global_array_to_host_local_array(g, mesh, am::P("a", "b"));
  CHECK(back.state() == g.state());
  CHECK_THROWS_WITH(mh::host_local_array_to_global_array(local, mesh, am::none),
                    "`None` is not a valid input to the pspecs argument. Please use PartitionSpec() if you wanted to "
                    "replicate your input.");
  CHECK_THROWS_AS(mh::host_local_array_to_global_array(host_array::arange(3), mesh, am::P("a")), am::indivisible_error);
  // pspecs given as a tree must be a prefix of the inputs' structure.
  CHECK_THROWS_WITH(mh::host_local_array_to_global_array(std::make_tuple(local, local), mesh, std::make_tuple(am::P())),
                    "host_local_array_to_global_array: pspecs must be one PartitionSpec or a tree prefix of the inputs' "
                    "structure PyTreeDef((*, *)), but its structure is PyTreeDef((*,))");
}

TEST_CASE("multihost: the local mesh is each process's subcube of the mesh", "[unit][multihost]") {
  // 8 devices, 2 per process, on a 4x2 mesh: each process owns one row.
  am::mesh m(am::device_grid({4, 2}, cluster_devices(8, 2)), {"x", "y"});
  auto l = am::local_mesh(m, 2);
  CHECK(l.axis_sizes() == std::vector<std::int64_t>{1, 2});
  CHECK(l.axis_names() == m.axis_names());
  CHECK(l.flat_devices()[0].id == 4);
  CHECK(l.flat_devices()[1].id == 5);
  // 4 per process on a 2x4 mesh transposed to 4x2: each process owns a 2x2 block.
  std::vector<am::device> d = cluster_devices(8, 4), order{d[0], d[1], d[4], d[5], d[2], d[3], d[6], d[7]};
  am::mesh blocks(am::device_grid({2, 4}, order), {"x", "y"});
  auto b = am::local_mesh(blocks, 1);
  CHECK(b.axis_sizes() == std::vector<std::int64_t>{2, 2});
  CHECK(b.flat_devices()[0].id == 4);
  CHECK(b.flat_devices()[3].id == 7);
}

TEST_CASE("multihost: a process whose devices are not contiguous in the mesh is refused", "[unit][multihost]") {
  std::vector<am::device> d = cluster_devices(4, 2), order{d[0], d[2], d[1], d[3]};
  am::mesh m(am::device_grid({4}, order), {"x"});
  CHECK_THROWS_WITH(am::local_mesh(m, 0), "When passing host local inputs to pjit, devices connected to a single host "
                                          "must form a contiguous subcube of the global device mesh");
  CHECK_THROWS_WITH(am::local_mesh(m, 7), "The mesh Mesh('x': 4) has no device of process 7");
}
