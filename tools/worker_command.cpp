// `actormesh worker`: a worker process of a single-controller cluster. It joins the controller's
// cluster, serves the controller's calls on its devices until the controller stops, and exits.
#include "tools/commands.hpp"

#include "actormesh/devices/runtime.hpp"

#include <fmt/ostream.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

namespace am::tools {

namespace {

struct worker_args {
  std::string coordinator;
  int process_id = 1;
  int num_processes = 2;
  int cpu_devices = 0;
};

/// How long a worker whose controller is gone may take to stop: nothing remote is waited for then
/// (the coordinator went with the controller), so only its own actors finish their current calls.
constexpr std::chrono::seconds lost_controller_stop_limit{10};

/// Ends the process with status 2 when a stop does not finish within its limit, saying so on
/// `err`: a worker must not outlive its controller because one of its actors does not finish.
class stop_watchdog {
public:
  stop_watchdog(std::chrono::milliseconds limit, std::ostream& err)
      : thread_([this, limit, &err] {
          std::unique_lock<std::mutex> guard(mutex_);
          if (cv_.wait_for(guard, limit, [this] { return done_; }))
            return;
          err << "worker: its runtime did not stop within " << limit.count()
              << " ms after the controller was lost; exiting\n";
          err.flush();
          std::_Exit(2);
        }) {}

  stop_watchdog(const stop_watchdog&) = delete;
  stop_watchdog& operator=(const stop_watchdog&) = delete;

  ~stop_watchdog() {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_; // last: it uses the members above
};

void serve(const worker_args& args, std::ostream& out, std::ostream& err, int& status) {
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
  try {
    rt.serve();
  } catch (const std::exception& e) {
    // The controller is gone (or this runtime failed): the reason first, then a bounded stop.
    err << error_line(e) << '\n';
    err.flush();
    stop_watchdog dog(lost_controller_stop_limit, err);
    rt.stop();
    status = 2;
    return;
  }
  rt.stop();
  fmt::print(out, "worker process {}: the controller stopped; exiting\n", args.process_id);
}

} // namespace

void add_worker_command(CLI::App& app, std::ostream& out, std::ostream& err, int& status) {
  auto args = std::make_shared<worker_args>();
  auto* cmd = app.add_subcommand("worker", "Serve a controller's calls on this process's devices "
                                           "(single-controller mode) until the controller stops");
  cmd->add_option("--coordinator", args->coordinator, "The controller's coordinator address, HOST:PORT")->required();
  cmd->add_option("--process-id", args->process_id, "This worker's process index (1 or above)")->required();
  cmd->add_option("--num-processes", args->num_processes, "Processes in the cluster, the controller included")
    ->required();
  cmd->add_option("--cpu-devices", args->cpu_devices, "Virtual CPU devices of this worker (default 8)")
    ->check(CLI::PositiveNumber);
  cmd->callback([args, &out, &err, &status] { serve(*args, out, err, status); });
}

} // namespace am::tools
