#include "devices/collectives/world.hpp"

#include "actors/errors.hpp"
#include "devices/detail/runtime_impl.hpp"

namespace am {

std::unique_ptr<communicator> make_communicator(const std::string& name, std::vector<int> processes) {
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
