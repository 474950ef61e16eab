// What doc/sharding.md's fragments take from the text around them (declared only: the test compiles,
// it neither links nor runs). The doc prints with fmt.
#pragma once

#include <fmt/core.h>

extern int argc;
extern char** argv;
extern std::vector<am::device> cpus;                              // the 8 CPU devices
extern am::array x, y;                                            // the 8192 x 8192 example, placed
extern am::array by_rows, by_cols;                                // P('a') and P(None, 'b')
// From "3. NamedSharding": the (4, 2) mesh and its sharding maker.
extern const am::mesh mesh;
extern std::function<am::sharding_ptr(const am::partition_spec&)> mesh_sharding;
