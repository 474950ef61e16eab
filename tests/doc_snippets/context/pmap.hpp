// What doc/pmap.md's fragments take from the text around them (declared only: the test compiles,
// it neither links nor runs).
#pragma once

extern std::vector<am::device> devices, devices4;                 // 2 and 4 local devices
extern am::array w, b, sharded_x, sharded_y;                      // the training example's inputs
