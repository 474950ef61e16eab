// Host allocations that cannot succeed fail with am::out_of_memory_error and JAX's RESOURCE_EXHAUSTED
// wording: a request larger than physical memory plus swap at once (with overcommit
// it would "succeed" and kill the process when touched), a failing allocation by translation.
#include "actormesh/sharding/host_array.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace am;
using Catch::Matchers::Message;

TEST_CASE("a host array larger than memory plus swap is refused at once", "[host_array][oom]") {
  // 4 TiB of float32: more than any machine these tests run on holds.
  CHECK_THROWS_MATCHES(host_array::zeros({std::int64_t{1} << 40}, dtype::float32), out_of_memory_error,
                       Message("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4398046511104 bytes on "
                               "the host"));
  CHECK_THROWS_AS(host_array::empty({std::int64_t{1} << 40}, dtype::float32), out_of_memory_error);
  CHECK_THROWS_AS(host_array::ones({std::int64_t{1} << 38, 4}, dtype::uint8), out_of_memory_error);
  CHECK(host_array::zeros({1024}, dtype::float32).nbytes() == 4096);
}

// The sanitizers reserve terabytes of address space for their shadow memory, so an address-space
// limit cannot be set under them; the translation is checked in the plain builds.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
TEST_CASE("a failing host allocation raises out_of_memory_error, not std::bad_alloc", "[host_array][oom]") {
  // In a child allowed 512 MiB more address space than it uses, ask for 2 GiB: below memory plus
  // swap, so the allocation itself is tried and fails. The child reports what it saw in its status.
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    unsigned long pages = 0;
    if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(statm, "%lu", &pages) != 1)
        pages = 0;
      std::fclose(statm);
    }
    const rlim_t limit = pages * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t{512} << 20);
    const rlimit as{limit, limit};
    if (setrlimit(RLIMIT_AS, &as) != 0)
      _exit(10);
    try {
      host_array::empty({std::int64_t{1} << 31}, dtype::uint8);
      _exit(11); // allocated: the limit did not hold
    } catch (const out_of_memory_error& e) {
      _exit(std::string(e.what()) ==
                    "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 2147483648 bytes on the host"
                ? 0
                : 12);
    } catch (const std::bad_alloc&) {
      _exit(13);
    } catch (...) {
      _exit(14);
    }
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0); // 13: a bare std::bad_alloc escaped
}
#endif
