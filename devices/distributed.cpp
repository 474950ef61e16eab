#include "devices/distributed.hpp"

#include "actors/errors.hpp"
#include "devices/detail/runtime_impl.hpp"

namespace am::distributed {

void wait_at_barrier(const std::string& barrier_id, std::optional<std::chrono::milliseconds> timeout) {
  auto rt = detail::current_runtime();
  if (rt->workers())
    throw runtime_error("wait_at_barrier('" + barrier_id + "') is a multi-controller operation: in a single-controller "
                        "cluster only the controller runs the program, and its workers never arrive at a barrier");
  auto& cluster = rt->cluster();
  cluster.barrier(barrier_id, timeout.value_or(cluster.default_timeout()));
}

void key_value_set(const std::string& key, const std::string& value) {
  detail::current_runtime()->cluster().kv_set(key, value);
}

std::string blocking_key_value_get(const std::string& key, std::chrono::milliseconds timeout) {
  return detail::current_runtime()->cluster().kv_get(key, timeout);
}

} // namespace am::distributed
