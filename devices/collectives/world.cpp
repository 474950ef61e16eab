#include "devices/collectives/world.hpp"

#include "devices/detail/runtime_impl.hpp"

namespace am {

std::unique_ptr<communicator> make_communicator(const std::string& name, std::vector<int> processes) {
  auto rt = detail::current_runtime();
  if (processes.empty())
    for (int p = 0; p < rt->config().num_processes; ++p)
      processes.push_back(p);
  return std::make_unique<communicator>(rt->cluster(), std::move(processes), name, rt->data_plane_address(),
                                        rt->config().collective_timeout);
}

} // namespace am
