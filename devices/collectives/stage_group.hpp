/// The stages of pmap's collectives over one list of mapped devices (stage_reduction.hpp,
/// stage_gather.hpp): one worker thread runs them in the order they were issued, and one
/// communicator across processes serves them all, so every kind of stage keeps one program order
/// on every participant (the supervisor numbers and checks each operation).
#pragma once

#include "actormesh/build_config.hpp"
#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/collectives/communicator.hpp"
#include "devices/collectives/serial_worker.hpp"
#include "devices/detail/runtime_impl.hpp"
#if AM_HAVE_CUDA && AM_HAVE_NCCL
#include "devices/collectives/nccl_communicator.hpp"
#include "devices/cuda/cuda_buffer.hpp"
#endif

#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace am::detail {

/// The stages of one list of mapped devices: their worker and, across processes, their
/// communicator (created by the worker at the group's first stage; creation is collective, and
/// every process reaches its first stage of the group at the same point of the program).
struct stage_group {
  stage_group(runtime_impl& r, const std::vector<int>& devices, std::vector<int> p)
    : rt(r), name(name_of(devices)), processes(std::move(p)), worker("am-pmap-stage") {}

  /// The communicator's name: the same in every process for the same device list, at most 200
  /// characters however many devices (FNV-1a of the ids, and their count).
  static std::string name_of(const std::vector<int>& devices);

  runtime_impl& rt;
  std::string name;
  std::vector<int> processes;
  std::unique_ptr<communicator> comm; ///< only touched on the worker
  std::exception_ptr failure;         ///< the first failure across processes (worker only)
#if AM_HAVE_CUDA && AM_HAVE_NCCL
  std::unique_ptr<nccl_communicator> nccl;                  ///< CUDA devices' stages (worker only)
  std::map<int, std::shared_ptr<cuda::device_stream>> streams;    ///< the stage's stream per device id
#endif
  serial_worker worker;               ///< last: joined first, while the rest is alive
};

/// The runtime's stage group for the mapped device ids `devices` (in the axis's order), whose
/// parts live in `processes` (sorted): made at the first stage over that list.
stage_group& group_for(runtime_context& context, const std::vector<int>& devices, const std::vector<int>& processes);

/// Runs `op` on the group's communicator across its processes (created at the first call, on the
/// worker). The first failure is every later call's error too (the communicator is broken by it;
/// its own later refusals would hide what happened). Worker only.
void across_processes(stage_group& g, const std::function<void(communicator&)>& op);

/// A stage's parts once computed: their buffers (kept while in use) and data, in host memory.
struct host_parts {
  std::vector<buffer_ref> buffers;
  std::vector<const void*> data;
};

/// Waits for `parts` (throws a part's error); `what` ("a reduction stage") names the stage in the
/// internal error for a part outside host memory.
host_parts wait_for_parts(const std::vector<shard_future>& parts, const char* what);

/// The host pool of the first local device of `results` ((device id, promise) pairs), for a
/// stage's result; `what` names the stage in the internal errors (no local device, no pool).
template <class Results>
std::shared_ptr<buffer_pool> result_pool(stage_group& g, const Results& results, const char* what) {
  if (results.empty())
    throw runtime_error(std::string("internal: ") + what + " without a local device");
  auto pool = g.rt.cpu_pool(results.front().first);
  if (!pool)
    throw runtime_error(std::string("internal: ") + what + " on a device without a host pool");
  return pool;
}

/// Queues `run(g, stage)` on the group's worker, behind the stages already issued; when it
/// throws, every result of the stage (`stage.results`: (device id, promise) pairs) gets the error.
template <class Stage, class Run>
void post_stage(stage_group& g, Stage stage, Run run) {
  g.worker.post([&g, run, s = std::make_shared<Stage>(std::move(stage))] {
    try {
      run(g, *s);
    } catch (...) {
      for (auto& r : s->results)
        r.second.set_error(std::current_exception());
    }
  });
}

} // namespace am::detail
