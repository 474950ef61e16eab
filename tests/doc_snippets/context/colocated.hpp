// What doc/colocated.md's fragments take from the text and the blocks before them (declared only:
// the test compiles, it neither links nor runs).
#pragma once

using namespace std::chrono_literals;

extern int argc;
extern char** argv;
// From the first block: the seed's CPU devices, its sharding and the input array.
extern std::vector<am::device> cpu_devices;
extern am::sharding_ptr cpu_sharding;
extern am::array x;
// From "Functions": the registered add_one.
extern const decltype(am::colocated_python("tour.add_one", [](const am::array& x) { return x + 1; })) add_one;
// From "Classes": the Adder class and one object of it.
struct Adder {
  explicit Adder(int increment);
  am::array add(const am::array& x);
  int increment;
};
extern am::colocated_object<Adder> adder;
