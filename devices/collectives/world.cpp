#include "actormesh/devices/collectives/world.hpp"

#include "devices/collectives/runtime_communicator.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/detail/runtime_impl.hpp"

namespace am {

namespace {

/// The start of the names of the runtime's own communicators (am.world.<k>, am.agree.*, am.pmap.*,
/// am.shards.*, am.multihost).
constexpr const char* reserved_prefix = "am.";

} // namespace

std::unique_ptr<communicator> make_communicator(const std::string& name, std::vector<int> processes) {
  if (name.rfind(reserved_prefix, 0) == 0)
    throw value_error("Communicator name '" + name + "' starts with '" + reserved_prefix
                      + "', which the runtime keeps for its own communicators (barriers, pmap's stages and "
                        "checks, shard transfers): give it another name");
  return detail::make_runtime_communicator(name, std::move(processes));
}

std::unique_ptr<communicator> detail::make_runtime_communicator(const std::string& name, std::vector<int> processes) {
  auto rt = detail::current_runtime();
  if (processes.empty() && rt->workers())
    throw runtime_error("make_communicator('" + name + "') over every process is a multi-controller operation: in a "
                        "single-controller cluster the workers run no program and never join it");
  if (processes.empty())
    for (int p = 0; p < rt->config().num_processes; ++p)
      processes.push_back(p);
  return std::make_unique<communicator>(rt->cluster(), std::move(processes), name, rt->data_plane_address(),
                                        rt->config().collective_timeout);
}

} // namespace am
