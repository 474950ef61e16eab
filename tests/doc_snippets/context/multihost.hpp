// What doc/multihost.md's fragments take from the text around them (declared only: the test
// compiles, it neither links nor runs).
#pragma once

using namespace std::chrono_literals;

extern int rank;                                                 // the process's rank (0..3)
am::host_array load_rows_and_columns(const am::shard_index& block);   // the user's loader
extern std::vector<am::array> pieces;                            // this process's single-device arrays
extern am::host_array whole_host_array;
// A collective's buffers and element count.
extern const float* in;
extern float* out;
extern float* buf;
extern std::size_t n;
