// `actormesh worker`: a worker process of a single-controller cluster. It joins the controller's
// cluster, serves the controller's calls on its devices until the controller stops, and exits.
#include "tools/commands.hpp"

#include "devices/runtime.hpp"

#include <fmt/ostream.h>

#include <string>

namespace am::tools {

namespace {

struct worker_args {
  std::string coordinator;
  int process_id = 1;
  int num_processes = 2;
  int cpu_devices = 0;
};

void serve(const worker_args& args, std::ostream& out) {
  options opts;
  opts.role = process_role::worker;
  opts.coordinator_address = args.coordinator;
  opts.process_id = args.process_id;
  opts.num_processes = args.num_processes;
  if (args.cpu_devices > 0)
    opts.cpu_devices = args.cpu_devices;
  runtime rt(opts); // other settings (timeouts, TLS) from the AM_* variables
  std::string owned;
  for (auto& d : local_devices())
    owned += " " + to_string(d);
  fmt::print(out, "worker process {} of {} serves{}\n", process_index(), process_count(), owned);
  out.flush();
  rt.serve();
  rt.stop();
  fmt::print(out, "worker process {}: the controller stopped; exiting\n", args.process_id);
}

} // namespace

void add_worker_command(CLI::App& app, std::ostream& out) {
  auto args = std::make_shared<worker_args>();
  auto* cmd = app.add_subcommand("worker", "Serve a controller's calls on this process's devices "
                                           "(single-controller mode) until the controller stops");
  cmd->add_option("--coordinator", args->coordinator, "The controller's coordinator address, HOST:PORT")->required();
  cmd->add_option("--process-id", args->process_id, "This worker's process index (1 or above)")->required();
  cmd->add_option("--num-processes", args->num_processes, "Processes in the cluster, the controller included")
    ->required();
  cmd->add_option("--cpu-devices", args->cpu_devices, "Virtual CPU devices of this worker (default 8)")
    ->check(CLI::PositiveNumber);
  cmd->callback([args, &out] { serve(*args, out); });
}

} // namespace am::tools
