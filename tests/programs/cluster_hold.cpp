// A cluster member that holds its cluster open while a test does something from outside (the
// mutual-TLS tests send intruders at it): it joins, prints the global devices, meets the others at
// a barrier and prints "formed"; then it waits (at most 60 s) until the file GO exists, and proves
// the cluster still serves: process 0 stores a key that every process reads, and all meet at a
// second barrier.
//
//   cluster_hold GO
#include "actormesh.hpp"

#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>

#include <unistd.h>

namespace {

using namespace std::chrono_literals;

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

int run(const std::string& go) {
  am::runtime rt;
  int me = am::process_index();
  say("process " + std::to_string(me) + " of " + std::to_string(am::process_count()));
  std::string line = "devices:";
  for (auto& d : am::devices())
    line += " " + am::to_string(d) + "@" + std::to_string(d.process_index);
  say(line);
  am::distributed::wait_at_barrier("formed", 20s);
  say("formed");
  auto deadline = std::chrono::steady_clock::now() + 60s;
  while (::access(go.c_str(), F_OK) != 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      say("error: no go file within 60 s");
      return 2;
    }
    std::this_thread::sleep_for(20ms);
  }
  if (me == 0)
    am::distributed::key_value_set("after intruders", "still here");
  say("value: " + am::distributed::blocking_key_value_get("after intruders", 10s));
  am::distributed::wait_at_barrier("after intruders", 10s);
  say("still serving");
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    say("usage: cluster_hold GO");
    return 3;
  }
  try {
    return run(argv[1]);
  } catch (const std::exception& e) {
    say(std::string("error: ") + e.what());
    return 2;
  }
}
