#include "actormesh/devices/distributed.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/collectives/collective_errors.hpp"
#include "devices/collectives/world_barrier.hpp"
#include "devices/detail/runtime_impl.hpp"
#include "observability/flight_recorder.hpp"

#include <atomic>
#include <numeric>
#include <vector>

namespace am::distributed {

void wait_at_barrier(const std::string& barrier_id, std::optional<std::chrono::milliseconds> timeout) {
  auto rt = detail::current_runtime();
  if (rt->workers())
    throw runtime_error("wait_at_barrier('" + barrier_id + "') is a multi-controller operation: in a single-controller "
                        "cluster only the controller runs the program, and its workers never arrive at a barrier");
  auto& cluster = rt->cluster();
  // The flight recorder keeps every barrier as step k of the sequence "barriers" (k counts this
  // process's barriers), so a dump shows which barrier each process waited at.
  static std::atomic<std::uint64_t> barriers{0};
  std::vector<int> all(static_cast<std::size_t>(cluster.process_count()));
  std::iota(all.begin(), all.end(), 0);
  auto& recorder = observability::process_flight_recorder();
  const auto record = recorder.issue("barriers", ++barriers, "barrier", "", "", "barrier '" + barrier_id + "'", all);
  try {
    detail::world_barrier::of(*rt)->wait(barrier_id, timeout.value_or(cluster.default_timeout()));
  } catch (...) {
    const std::string message = detail::message_of(std::current_exception());
    recorder.mark(record, observability::op_state::failed, message);
    const std::string path = observability::dump_flight_recorder(cluster.process_index(), message);
    const std::string note = observability::flight_recorder_note(path);
    if (message.find(note) != std::string::npos) // the world communicator's barrier dumped and said so
      throw;
    std::rethrow_exception(detail::with_note(std::current_exception(), note));
  }
  recorder.mark(record, observability::op_state::completed);
}

void key_value_set(const std::string& key, const std::string& value) {
  detail::current_runtime()->cluster().kv_set(key, value);
}

std::string blocking_key_value_get(const std::string& key, std::chrono::milliseconds timeout) {
  return detail::current_runtime()->cluster().kv_get(key, timeout);
}

} // namespace am::distributed
