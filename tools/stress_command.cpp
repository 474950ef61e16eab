// `actormesh stress`: runs the stress mix (tools/stress_mix.hpp) from T threads, locally or as the
// controller of P-1 worker processes it starts on loopback (copies of this binary, so the mix's
// functions and classes are registered there and its colocated calls run there), shows its
// progress, and reports
// throughput, round latency, order violations and errors; any violation or error is exit status 1.
#include "tools/commands.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/runtime.hpp"
#include "tools/progress_display.hpp"
#include "tools/stress_mix.hpp"
#include "tools/worker_processes.hpp"

#include <fmt/ostream.h>

#include <optional>
#include <string>

namespace am::tools {

namespace {

struct stress_args {
  stress_config config;
  std::string mix = "all";
  int processes = 1;
  int cpu_devices = 0;
  std::string worker_program;
};


void apply_mix(stress_args& args) {
  if (args.mix == "all" || args.mix == "colocated" || args.mix == "arrays") {
    args.config.colocated = args.mix != "arrays";
    args.config.arrays = args.mix != "colocated";
    return;
  }
  throw value_error("stress: --mix must be all, colocated or arrays, got '" + args.mix + "'");
}

int run_stress(stress_args& args, std::ostream& out, std::ostream& err) {
  apply_mix(args);
  check_stress_config(args.config);
  if (args.processes < 1 || args.processes > 64)
    throw value_error("stress: --processes must be 1..64, got " + std::to_string(args.processes));
  options opts;
  opts.use_gpus = false;
  if (args.cpu_devices > 0)
    opts.cpu_devices = args.cpu_devices;
  std::optional<worker_processes> workers;
  if (args.processes > 1) {
    int per_process = args.cpu_devices > 0 ? args.cpu_devices : 2; // every process alike
    opts.cpu_devices = per_process;
    int port = free_loopback_port();
    workers.emplace(args.worker_program.empty() ? running_executable() : args.worker_program, args.processes, port,
                    per_process);
    opts.role = process_role::controller;
    opts.coordinator_address = "127.0.0.1:" + std::to_string(port);
    opts.process_id = 0;
    opts.num_processes = args.processes;
    opts.join_timeout = std::chrono::seconds(30);
  }
  stress_report report;
  {
    runtime rt(opts);
    fmt::print(out, "stress: {} threads x {} rounds, mix {}, {} devices in {} process(es)\n", args.config.threads,
               args.config.calls, args.mix, devices().size(), args.processes);
    out.flush();
    progress_display display(out, is_terminal(out), "rounds");
    report = run_stress_mix(args.config, [&](std::int64_t done, std::int64_t total) { display.update(done, total); });
    display.finish();
    rt.stop();
  }
  if (workers && !workers->wait(std::chrono::seconds(30))) {
    err << "stress: a worker did not end cleanly:\n" << workers->output();
    ++report.errors;
  }
  fmt::print(out, "rounds: {}, calls: {}, in {:.3f} s\n", report.rounds, report.calls, report.seconds);
  fmt::print(out, "throughput: {:.0f} calls/s\n", report.seconds > 0 ? report.calls / report.seconds : 0.0);
  fmt::print(out, "round latency: p50 {:.1f} us, p99 {:.1f} us\n", report.p50_us, report.p99_us);
  fmt::print(out, "order violations: {}\n", report.violations);
  fmt::print(out, "errors: {}\n", report.errors);
  for (auto& m : report.messages)
    err << "stress: " << m << '\n';
  return report.violations == 0 && report.errors == 0 ? 0 : 1;
}

} // namespace

void add_stress_command(CLI::App& app, std::ostream& out, std::ostream& err, int& status) {
  auto args = std::make_shared<stress_args>();
  auto* cmd = app.add_subcommand("stress", "Mix colocated calls, colocated objects and array operations from "
                                           "many threads and check that every thread's order held");
  cmd->add_option("--threads", args->config.threads, "Caller threads (1..1024)")->required();
  cmd->add_option("--calls", args->config.calls, "Rounds per thread; each round makes one call of each kind")
    ->required();
  cmd->add_option("--processes", args->processes,
                  "Processes: this one as controller and P-1 `actormesh worker` processes on loopback");
  cmd->add_option("--mix", args->mix, "What each round calls: all, colocated or arrays (default all)");
  cmd->add_option("--cpu-devices", args->cpu_devices, "CPU devices per process (default 8, or 2 with --processes)")
    ->check(CLI::PositiveNumber);
  cmd->add_option("--worker-program", args->worker_program, "The actormesh binary workers run (default: this one)");
  cmd->callback([args, &out, &err, &status] { status = run_stress(*args, out, err); });
}

} // namespace am::tools
