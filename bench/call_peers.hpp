/// The peers of the call benchmarks (bench_colocated, bench_actor_mesh): timed round trips, raw
/// CAF's request round trip, and Ray's actor calls run by bench/ray_peer.py in a child process.
#pragma once

#include <caf/all.hpp>

#include <fmt/core.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace am::bench {

using call_clock = std::chrono::steady_clock;
using ping_atom = caf::atom_constant<caf::atom("ping")>;

inline double micros(call_clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

/// `rounds` timed round trips of `call` (after 200 untimed ones), in microseconds.
template <class Call>
std::vector<double> round_trips(int rounds, Call&& call) {
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(rounds));
  for (int i = 0; i < rounds + 200; ++i) {
    auto start = call_clock::now();
    call();
    if (i >= 200)
      samples.push_back(micros(call_clock::now() - start));
  }
  return samples;
}

/// Raw CAF: a scoped_actor's blocking request to an actor (detached: a thread of its own, as a
/// colocated lane is; else on the scheduler), per round trip.
inline std::vector<double> caf_round_trips(caf::actor_system& sys, int rounds, bool detached) {
  auto behavior = [](caf::event_based_actor*) -> caf::behavior { return {[](ping_atom, int v) { return v + 1; }}; };
  auto echo = detached ? sys.spawn<caf::detached>(behavior) : sys.spawn(behavior);
  caf::scoped_actor self{sys};
  auto samples = round_trips(rounds, [&] {
    self->request(echo, caf::infinite, ping_atom::value, 1).receive([](int) {}, [](caf::error&) {});
  });
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
  return samples;
}

struct ray_figures {
  double median_us = 0;
  double p99_us = 0;
  double async_per_s = 0;
};

/// Runs bench/ray_peer.py; nothing (after a message) when Ray is not there or fails.
inline std::optional<ray_figures> run_ray(const std::string& python, const std::string& script, int rounds, int calls) {
  auto command = fmt::format("'{}' '{}' --rounds {} --async-calls {} 2>&1", python, script, rounds, calls);
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) {
    fmt::print("  Ray: skipped (cannot run {})\n", python);
    return std::nullopt;
  }
  std::string text;
  std::array<char, 4096> chunk{};
  while (std::fgets(chunk.data(), chunk.size(), pipe))
    text += chunk.data();
  int status = ::pclose(pipe);
  ray_figures r;
  auto number = [&](const char* label) {
    auto at = text.find(label);
    return at == std::string::npos ? -1.0 : std::stod(text.substr(at + std::strlen(label)));
  };
  r.median_us = number("ray sync median us: ");
  r.p99_us = number("ray sync p99 us: ");
  r.async_per_s = number("ray async calls/s: ");
  if (status != 0 || r.median_us < 0 || r.async_per_s < 0) {
    while (!text.empty() && text.back() == '\n')
      text.pop_back();
    auto last = text.find_last_of('\n');
    fmt::print("  Ray: skipped ({}: {})\n", python,
               text.empty() ? "no output" : text.substr(last == std::string::npos ? 0 : last + 1));
    return std::nullopt;
  }
  return r;
}

inline std::string default_ray_python() {
  if (const char* p = std::getenv("AM_RAY_PYTHON"))
    return p;
  if (std::filesystem::exists("/work/venv-ray/bin/python"))
    return "/work/venv-ray/bin/python";
  return "python3";
}

} // namespace am::bench
