// Host lanes of threads that end: each thread that calls colocated code gets a lane worker (a thread
// of its own) in the host actor; when the calling thread ends, the lane is retired after the tasks
// it already has, so a program whose threads come and go keeps its thread count flat.
#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace {

/// This process's thread count (/proc/self/status).
int process_threads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Threads:", 0) == 0)
      return std::stoi(line.substr(8));
  return -1;
}

const auto plus_one = am::colocated_python("lane_retire.plus_one", [](const am::array& x) { return x + 1; });

} // namespace

TEST_CASE("colocated lanes: threads that come and go leave no lane threads behind", "[unit][colocated]") {
  am::options o;
  o.cpu_devices = 2;
  o.use_gpus = false;
  am::runtime rt(o);
  auto x = am::device_put(am::host_array::scalar(1.0f), am::devices()[0]);
  plus_one(x).block_until_ready();
  int before = process_threads();
  for (int t = 0; t < 60; ++t)
    std::thread([&] {
      auto y = plus_one(x); // a lane for this thread, with its last task still queued as it ends
      auto f = am::host_call([] { std::this_thread::sleep_for(std::chrono::milliseconds(1)); return 7; });
      CHECK(f.get() == 7);
      y.block_until_ready();
    }).join();
  // Retirement is asynchronous: give the lane workers a moment to stop.
  int after = process_threads();
  for (int wait = 0; wait < 100 && after - before >= 10; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    after = process_threads();
  }
  INFO("threads before " << before << ", after 60 calling threads " << after);
  CHECK(after - before < 10);
  CHECK(plus_one(x).to_host().get<float>({}) == 2.0f); // the runtime still serves
}
