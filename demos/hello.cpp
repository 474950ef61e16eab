// The main demo: starts the runtime (8 virtual CPU devices by default), lists the devices, then
// runs ordered calls from several threads on every device and checks that each thread's calls ran
// in the order it issued them. An error in any thread (a device out of memory, a timeout) ends the
// demo with one `error:` line and exit status 2.
//
//   ./build/demos/hello [--am-cpu-devices N] [--threads T] [--steps S]
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

/// The value of `--name N` on the command line (`fallback` when absent); throws am::value_error
/// when N is not a whole number of at least `minimum`.
int int_flag(int argc, char** argv, const char* name, int fallback, int minimum) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) != 0)
      continue;
    const std::string text = argv[i + 1];
    std::size_t used = 0;
    int value = 0;
    try {
      value = std::stoi(text, &used);
    } catch (const std::logic_error&) { // not a number, or out of int's range
      used = 0;
    }
    if (used == 0 || used != text.size() || value < minimum)
      throw am::value_error(fmt::format("{} expects a whole number of at least {}, got '{}'", name,
                                        minimum, text));
    return value;
  }
  return fallback;
}

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

    const int threads = int_flag(argc, argv, "--threads", 4, 1);
    const int steps = int_flag(argc, argv, "--steps", 200, 0);
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
