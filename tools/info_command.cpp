// `actormesh info`: what this build was configured with, the devices a runtime finds, and why
// there are no GPUs when there are none; with --watch, the live counters of a running cluster
// (tools/info_watch.hpp).
#include "cluster/guard/cluster_secret.hpp"
#include "tools/commands.hpp"
#include "tools/info_watch.hpp"
#include "tools/progress_display.hpp"

#include "actormesh/build_config.hpp"
#include "actormesh/actors/errors.hpp"
#include "devices/cpu/blas_kernels.hpp"
#include "devices/cpu/onednn_sgemm.hpp"
#include "actormesh/devices/runtime.hpp"

#if AM_HAVE_CUDA
#include "devices/cuda/cuda_probe.hpp"
#endif

#include <fmt/ostream.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>

namespace am::tools {

namespace {

struct info_args {
  int cpu_devices = 0;
  bool no_gpus = false;
  bool watch = false;
  bool json = false;
  std::string coordinator;
  int count = 0;
  double interval = 1.0;
  double connect_timeout = 10.0;
  double answer_timeout = 5.0;
};

void print_build(std::ostream& out) {
  fmt::print(out, "actormesh {} ({} build{}{})\n", build::version, build::build_type,
             *build::sanitizer ? ", sanitizer " : "", build::sanitizer);
  fmt::print(out, "  CAF    {}\n", build::caf_version);
#if AM_HAVE_CUDA
  fmt::print(out, "  CUDA   {} (toolkit at build time; runtime library {})\n", build::cuda_version,
             detail::cuda_runtime_version());
  fmt::print(out, "  NCCL   {}\n", *build::nccl_version ? build::nccl_version : "not found at build time");
#else
  fmt::print(out, "  CUDA   not built with CUDA\n");
  fmt::print(out, "  NCCL   not built with CUDA\n");
#endif
}

void print_runtime(std::ostream& out, const info_args& args) {
  options opts;
  if (args.cpu_devices > 0)
    opts.cpu_devices = args.cpu_devices;
  if (args.no_gpus)
    opts.use_gpus = false;
  runtime rt(opts);
  auto& cfg = rt.config();
  fmt::print(out, "runtime\n");
  fmt::print(out, "  scheduler        {} ({} threads)\n", to_string(cfg.scheduler),
             cfg.scheduler_threads == 0 ? std::string("default") : std::to_string(cfg.scheduler_threads));
  fmt::print(out, "  process          {} of {}\n", process_index(), process_count());
  if (cfg.clustered())
    fmt::print(out, "  coordinator      {} (from {}; listening on {} when process 0)\n", cfg.coordinator_address,
               cfg.cluster_source, cfg.listen_address);
  else
    fmt::print(out, "  coordinator      none (local mode)\n");
  fmt::print(out, "  default platform {}\n", platform_name(default_platform()));
  const auto& blas = detail::ensure_blas_kernels();
  fmt::print(out, "  BLAS kernels     {} ({}; {})\n", blas.core, blas.library, blas.why);
  if (detail::float32_products().onednn)
    fmt::print(out, "  float32 products {}, {}-bit kernels; float64: OpenBLAS\n", detail::float32_products().why,
               detail::onednn_vector_bits());
  else
    fmt::print(out, "  float32 products {}; float64: OpenBLAS\n", detail::float32_products().why);
  auto cpus = am::devices(platform::cpu);
  fmt::print(out, "devices\n");
  for (auto& d : cpus)
    fmt::print(out, "  {:<18} process {}  {}:{}\n", to_string(d), d.process_index, platform_name(d.platform),
               d.local_ordinal);
  if (rt.gpus().count > 0) {
    for (auto& d : am::devices(platform::cuda))
      fmt::print(out, "  {:<18} process {}  {}:{}\n", to_string(d), d.process_index,
                 platform_name(d.platform), d.local_ordinal);
    fmt::print(out, "GPUs: {} CUDA device(s), driver {}\n", rt.gpus().count, rt.gpus().driver);
  } else {
    fmt::print(out, "GPUs: none, using CPU devices only. Why: {}\n", rt.gpus().reason);
  }
}

} // namespace

void add_info_command(CLI::App& app, std::ostream& out) {
  auto args = std::make_shared<info_args>();
  auto* cmd = app.add_subcommand("info", "Print the build configuration and the devices found");
  cmd->add_option("--cpu-devices", args->cpu_devices, "Number of virtual CPU devices (default 8)");
  cmd->add_flag("--no-gpus", args->no_gpus, "Do not look for GPUs");
  cmd->add_flag("--watch", args->watch,
                "Print the live counters of every process of a running cluster (asked of its coordinator), "
                "refreshed in place on a terminal");
  cmd->add_option("--coordinator", args->coordinator,
                  "With --watch: HOST:PORT of the cluster's process 0 (default: AM_COORDINATOR)");
  cmd->add_option("--count", args->count, "With --watch: refreshes before it ends (default 0: until the cluster ends)")
    ->check(CLI::Range(0, 1000000));
  cmd->add_flag("--json", args->json, "With --watch: one JSON object per refresh, one line each (for scripts)");
  cmd->add_option("--interval", args->interval, "With --watch: seconds between refreshes (default 1)")
    ->check(CLI::Range(0.05, 3600.0));
  cmd->add_option("--connect-timeout", args->connect_timeout,
                  "With --watch: seconds to keep trying to reach the coordinator, which may be starting (default 10)")
    ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--answer-timeout", args->answer_timeout,
                  "With --watch: seconds each refresh waits for the processes' answers; a process that gives none "
                  "by then is listed as such (default 5)")
    ->check(CLI::Range(0.2, 3600.0));
  cmd->callback([args, &out] {
    if (args->watch) {
      watch_options w;
      w.coordinator = args->coordinator;
      w.secret = detail::cluster_token_from_environment();
      if (w.coordinator.empty())
        if (const char* env = std::getenv("AM_COORDINATOR"))
          w.coordinator = env;
      if (w.coordinator.empty())
        throw value_error("info --watch: which cluster? Give --coordinator HOST:PORT or AM_COORDINATOR (start the "
                          "program under `actormesh launch --coordinator-port PORT` to know its port)");
      w.count = args->count;
      w.interval_seconds = args->interval;
      w.connect_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(args->connect_timeout * 1000));
      w.answer_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(args->answer_timeout * 1000));
      w.json = args->json;
      watch_cluster(w, out, is_terminal(out));
      return;
    }
    if (args->json)
      throw value_error("info: --json goes with --watch (the live counters); plain `actormesh info` prints text");
    print_build(out);
    print_runtime(out, *args);
  });
}

} // namespace am::tools
