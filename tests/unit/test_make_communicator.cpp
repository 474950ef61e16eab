// am::make_communicator, the user's way to a communicator of the running cluster: the names the
// runtime keeps for its own communicators are refused before anything is made.
#include "support/arrays.hpp"

#include <catch2/catch.hpp>

TEST_CASE("make_communicator refuses the runtime's own names and makes others", "[collectives][world]") {
  am::runtime rt(am::testing::cpus_only(1));
  for (const char* name : {"am.world.1", "am.agree.0123456789abcdef.1", "am.mine"}) {
    INFO(name);
    CHECK_THROWS_AS(am::make_communicator(name), am::value_error);
    CHECK_THROWS_WITH(am::make_communicator(name), Catch::Contains("which the runtime keeps for its own"));
  }
  auto comm = am::make_communicator("amateur"); // only the "am." prefix is kept
  CHECK(comm->name() == "amateur");
  CHECK(comm->size() == 1);
}
