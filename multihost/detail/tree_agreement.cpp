#include "multihost/detail/tree_agreement.hpp"

#include "actors/errors.hpp"
#include "multihost/detail/crc32.hpp"

namespace am::detail {

std::vector<std::int64_t> agree_on_tree(communicator& comm, const std::string& what, const std::string& signature,
                                        std::int64_t flag) {
  const auto n = static_cast<std::size_t>(comm.size());
  std::int64_t mine[2] = {static_cast<std::int64_t>(crc32(signature)), flag};
  std::vector<std::int64_t> all(2 * n);
  comm.all_gather(mine, all.data(), 2, dtype::int64);
  std::vector<int> differ;
  std::vector<std::int64_t> flags(n);
  for (std::size_t r = 0; r < n; ++r) {
    flags[r] = all[2 * r + 1];
    if (all[2 * r] != all[0])
      differ.push_back(comm.processes()[r]);
  }
  if (!differ.empty()) {
    std::string list = "[";
    for (std::size_t k = 0; k < differ.size(); ++k)
      list += (k ? ", " : "") + std::to_string(differ[k]);
    throw value_error(what + ": every process must pass a tree of the same structure, shapes and dtypes, but "
                      + (differ.size() == 1 ? "process " : "processes ") + list.substr(1)
                      + " passed another than process " + std::to_string(comm.processes()[0]) + " (this process: "
                      + signature + ")");
  }
  return flags;
}

} // namespace am::detail
