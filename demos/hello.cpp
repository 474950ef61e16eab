// The main demo: starts the runtime (8 virtual CPU devices by default), lists the devices, then
// runs ordered calls from several threads on every device and checks that each thread's calls ran
// in the order it issued them. An error in any thread (a device out of memory, a timeout) ends the
// demo with one `error:` line and exit status 2.
//
//   ./build/demos/hello [--am-cpu-devices N] [--threads T] [--steps S]
#include "demos/support/demo_command_line.hpp"
#include <actormesh.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

/// x -> x * 3 + step: the result of a chain depends on the order its steps ran in.
std::shared_ptr<const am::program> step_program(std::int64_t step) {
  am::value_type t{am::dtype::int64, {4}};
  am::program_builder b("step" + std::to_string(step));
  auto x = b.parameter(t);
  auto three = b.constant(3, t);
  auto s = b.constant(static_cast<double>(step), t);
  b.output(b.binary(am::opcode::add, b.binary(am::opcode::multiply, x, three), s));
  return b.build();
}

std::int64_t expected_chain(std::int64_t start, int steps) {
  std::uint64_t x = static_cast<std::uint64_t>(start);
  for (int s = 0; s < steps; ++s)
    x = x * 3 + static_cast<std::uint64_t>(s);
  return static_cast<std::int64_t>(x);
}

/// Runs `body(t)` for t in [0, threads) on threads of its own and waits for them all. An exception
/// never escapes a thread: the first one thrown is rethrown here, after every thread has ended.
void run_threads(int threads, const std::function<void(int)>& body) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
  std::vector<std::thread> workers;
  auto join_all = [&] {
    for (auto& w : workers)
      w.join();
  };
  try {
    for (int t = 0; t < threads; ++t)
      workers.emplace_back([&body, &errors, t] {
        try {
          body(t);
        } catch (...) {
          errors[static_cast<std::size_t>(t)] = std::current_exception();
        }
      });
  } catch (...) { // a thread could not be started: let the others finish, then report it
    join_all();
    throw;
  }
  join_all();
  for (auto& e : errors)
    if (e)
      std::rethrow_exception(e);
}

} // namespace

int main(int argc, char** argv) {
  int threads = 4, steps = 200;
  am::demo::command_line cli("hello", "Lists the devices, then checks that calls from several threads on every device "
                                      "run in the order each thread issued them");
  cli.add_count("--threads", threads, "threads, each running its own chain on every device", 1);
  cli.add_count("--steps", steps, "steps in each chain", 0);
  if (auto status = cli.parse(argc, argv))
    return *status;
  try {
    am::runtime rt(argc, argv);
    auto devs = am::devices();
    fmt::print("actormesh runtime: {} process(es), default platform {}\n", am::process_count(),
               am::platform_name(am::default_platform()));
    fmt::print("{} devices:\n", devs.size());
    for (auto& d : devs)
      fmt::print("  {}\n", am::to_string(d));
    if (rt.gpus().count == 0)
      fmt::print("(no GPUs: {})\n", rt.gpus().reason);

    std::vector<std::shared_ptr<const am::program>> programs;
    for (int s = 0; s < steps; ++s)
      programs.push_back(step_program(s));

    // Every thread runs its own chain on every device; the chains interleave in the devices'
    // mailboxes, and each must still see its own steps in order.
    auto started = std::chrono::steady_clock::now();
    std::vector<int> mismatches(static_cast<std::size_t>(threads), 0);
    run_threads(threads, [&](int t) {
      for (auto& d : devs) {
        std::int64_t start = 1000 * t + d.id;
        std::vector<std::int64_t> init(4, start);
        std::vector<std::byte> bytes(sizeof(std::int64_t) * 4);
        std::memcpy(bytes.data(), init.data(), bytes.size());
        auto x = am::upload(d, std::move(bytes), {am::dtype::int64, {4}});
        for (auto& p : programs)
          x = am::execute(d, p, {x})[0];
        auto host = am::fetch(d, x).get(std::chrono::seconds(30));
        std::int64_t got = 0;
        std::memcpy(&got, host.data(), sizeof(got));
        if (got != expected_chain(start, steps))
          ++mismatches[static_cast<std::size_t>(t)];
      }
      // A host-actor call in this thread's lane, after its device work.
      am::host_call([] { return 0; }).get(std::chrono::seconds(30));
    });
    auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    int bad = 0;
    for (int m : mismatches)
      bad += m;
    auto calls = static_cast<long long>(threads) * static_cast<long long>(devs.size()) * (steps + 2);
    fmt::print("{} threads x {} devices x {} ordered calls: {} in {:.3f} s ({:.0f} calls/s), "
               "{} chains out of order\n",
               threads, devs.size(), steps + 2, bad == 0 ? "all in order" : "ORDER VIOLATED", elapsed,
               static_cast<double>(calls) / elapsed, bad);
    return bad == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fflush(stdout); // the error comes after what the demo printed so far
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
}
