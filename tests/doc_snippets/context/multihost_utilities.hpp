// What doc/multihost_utilities.md's fragments take from the text around them (declared only: the
// test compiles, it neither links nor runs).
#pragma once

namespace mh = am::multihost;

extern int P;                                                    // the process count
extern int n;                                                    // the same
extern std::tuple<am::host_array, std::map<std::string, float>> params, tree, state;
extern std::uint8_t u8;
extern am::host_array x, local;                                  // x: broadcast_one_to_all's result
extern am::array global_array, w;
extern std::int64_t step;
extern std::string dir;
extern am::mesh mesh;
extern am::sharding_ptr new_sharding;
void train(std::int64_t step);
void run_step(const std::vector<am::device>& live);
