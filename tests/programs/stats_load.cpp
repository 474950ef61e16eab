// A cluster member that keeps its devices and its host lane busy while a test watches it from
// outside (`actormesh info --watch`): it joins, meets the others at a barrier and prints "formed",
// then runs rounds of calls on its own devices (an upload, STEPS programs and a fetch on each) and
// a host call per round, until the file STOP exists (at most 60 s). It prints how many calls each
// of its devices got, meets the others again and ends.
//
//   stats_load STOP [STEPS]
#include "actormesh.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include <unistd.h>

namespace {

using namespace std::chrono_literals;

std::shared_ptr<const am::program> step_program() {
  am::value_type t{am::dtype::int64, {16}};
  am::program_builder b("step");
  auto x = b.parameter(t);
  b.output(b.binary(am::opcode::add, x, b.constant(1, t)));
  return b.build();
}

int run(const std::string& stop, int steps) {
  am::runtime rt;
  int me = am::process_index();
  am::distributed::wait_at_barrier("formed", 20s);
  std::printf("process %d formed\n", me);
  std::fflush(stdout);
  auto prog = step_program();
  am::value_type t{am::dtype::int64, {16}};
  std::vector<am::device> mine;
  for (auto& d : am::devices())
    if (d.process_index == me)
      mine.push_back(d);
  auto deadline = std::chrono::steady_clock::now() + 60s;
  long rounds = 0;
  while (::access(stop.c_str(), F_OK) != 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::printf("error: no stop file within 60 s\n");
      return 2;
    }
    for (auto& d : mine) {
      auto x = am::upload(d, std::vector<std::byte>(16 * sizeof(std::int64_t)), t);
      for (int i = 0; i < steps; ++i)
        x = am::execute(d, prog, {x})[0];
      am::fetch(d, x).get(30s);
    }
    am::host_call([] { return 0; }).get(30s);
    ++rounds;
    std::this_thread::sleep_for(2ms);
  }
  std::printf("process %d ran %ld rounds: %ld calls per device\n", me, rounds, rounds * (steps + 2));
  std::fflush(stdout);
  am::distributed::wait_at_barrier("done", 20s);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: stats_load STOP [STEPS]\n");
    return 2;
  }
  try {
    return run(argv[1], argc > 2 ? std::atoi(argv[2]) : 8);
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
}
