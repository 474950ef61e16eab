// pmap's gather, scatter and permute stages under a hostile caller: many threads calling one
// pmapped function whose stages are a ppermute, a psum_scatter and an all_gather each get their own
// values; stopping the runtime while such stages are queued or running neither hangs nor crashes.
#include "grad_test_support.hpp"
#include "stage_test_support.hpp"

using namespace am;
using namespace am::testing;
using namespace grad_test;
using namespace stage_test;

namespace {

std::vector<std::pair<int, int>> ring_of_eight() {
  std::vector<std::pair<int, int>> ring;
  for (int i = 0; i < 8; ++i)
    ring.emplace_back(i, (i + 1) % 8);
  return ring;
}

} // namespace

TEST_CASE("many threads calling one pmap of permute, scatter and gather stages each get their own values",
          "[pmap][stages][threads]") {
  runtime rt(eight_cpus());
  auto ring = ring_of_eight();
  auto f = pmap([ring](const array& a) {
    return all_gather(psum_scatter(ppermute(a, "i", ring), "i", 0, true), "i", 0, true);
  }, "i", {0}, {none});
  check_threads(f, 8.0, 10); // each device's v summed over 8 devices, gathered everywhere
}

TEST_CASE("stopping the runtime while permute, scatter and gather stages are in flight neither hangs nor crashes",
          "[pmap][stages][stop]") {
  auto ring = ring_of_eight();
  check_stop_in_flight([ring](const array& a) {
    return ppermute(all_gather(psum_scatter(a, "i", 0, true), "i", 0, true), "i", ring);
  }, {0});
}
