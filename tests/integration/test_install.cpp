// `cmake --install` then an outside project that does find_package(actormesh) and links
// actormesh::actormesh, built and run against the install tree.
#include "support/build_paths.hpp"
#include "support/process.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using am::testing::run_command;

TEST_CASE("an outside CMake project builds and runs against the install tree", "[integration][install]") {
  namespace fs = std::filesystem;
  auto work = fs::path(am::testing::binary_dir()) / "consumer-test";
  fs::remove_all(work);
  fs::create_directories(work);
  auto prefix = (work / "prefix").string();
  auto install = run_command("cmake --install " + am::testing::binary_dir() + " --prefix " + prefix);
  INFO(install.output);
  REQUIRE(install.status == 0);
  // The umbrella at the top, every other public header under actormesh/, and no floor folder of its
  // own in the user's include directory.
  CHECK(fs::exists(fs::path(prefix) / "include/actormesh.hpp"));
  CHECK(fs::exists(fs::path(prefix) / "include/actormesh/sharding/mesh.hpp"));
  CHECK_FALSE(fs::exists(fs::path(prefix) / "include/sharding"));
  CHECK_FALSE(fs::exists(fs::path(prefix) / "include/actormesh/cluster"));
  CHECK_FALSE(fs::exists(fs::path(prefix) / "include/actormesh/devices/detail/runtime_impl.hpp"));
  CHECK(fs::exists(fs::path(prefix) / "bin/actormesh"));
  // The consumer uses this build's generator and compiler: a fresh machine has what the README
  // installs (ninja), not necessarily make.
  auto configure = run_command("cmake -S " + am::testing::source_dir() + "/tests/consumer -B "
                               + (work / "build").string() + " -G \"" + am::testing::cmake_generator() + "\""
                               + " -DCMAKE_CXX_COMPILER=" + am::testing::cxx_compiler() + " -DCMAKE_PREFIX_PATH=" + prefix);
  INFO(configure.output);
  REQUIRE(configure.status == 0);
  auto build = run_command("cmake --build " + (work / "build").string());
  INFO(build.output);
  REQUIRE(build.status == 0);
  // The allocator: the exported targets name actormesh::jemalloc, which the package's config finds
  // on the consumer's machine, never a path of the machine that built the package; by default the
  // consumer's executable links jemalloc itself (so it replaces malloc), and ACTORMESH_JEMALLOC=OFF
  // leaves it out. A build without jemalloc (sanitizers, -DAM_JEMALLOC=OFF) exports neither.
  auto targets = run_command("find " + prefix + " -name actormeshTargets.cmake -exec cat {} +");
  REQUIRE(targets.status == 0);
  CHECK_THAT(targets.output, !Catch::Contains("libjemalloc"));
  if (targets.output.find("actormesh::jemalloc") != std::string::npos) {
    auto needed = run_command("readelf -d " + (work / "build/consumer").string());
    CHECK_THAT(needed.output, Catch::Contains("libjemalloc"));
    auto without = run_command("cmake -S " + am::testing::source_dir() + "/tests/consumer -B "
                               + (work / "build-own-malloc").string() + " -G \"" + am::testing::cmake_generator()
                               + "\" -DCMAKE_CXX_COMPILER=" + am::testing::cxx_compiler() + " -DCMAKE_PREFIX_PATH="
                               + prefix + " -DACTORMESH_JEMALLOC=OFF && cmake --build "
                               + (work / "build-own-malloc").string());
    INFO(without.output);
    REQUIRE(without.status == 0);
    auto own = run_command("readelf -d " + (work / "build-own-malloc/consumer").string());
    CHECK_THAT(own.output, Catch::Contains("libactormesh"));
    CHECK_THAT(own.output, !Catch::Contains("libjemalloc"));
  }
  auto run = run_command((work / "build/consumer").string());
  INFO(run.output);
  CHECK(run.status == 0);
  CHECK_THAT(run.output, Catch::Contains("3 devices, last CpuDevice(id=2), result 10 11 12 13"));
  CHECK_THAT(run.output, Catch::Contains("consumer: jit sum 36"));
  // The installed tool runs from the install tree without LD_LIBRARY_PATH.
  auto tool = run_command("env -u LD_LIBRARY_PATH " + prefix + "/bin/actormesh visualize --shape 8 --mesh 2 --spec x");
  INFO(tool.output);
  CHECK(tool.status == 0);
  CHECK_THAT(tool.output, Catch::Contains("│ CPU 0 │ CPU 1 │"));
}
