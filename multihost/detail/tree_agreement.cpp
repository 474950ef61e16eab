#include "multihost/detail/tree_agreement.hpp"

#include "actormesh/actors/errors.hpp"
#include "multihost/detail/crc32.hpp"

#include <cstring>

namespace am::detail {

namespace {

constexpr std::size_t header_bytes = 2 * sizeof(std::int64_t);

/// Gathers header + payload padded to `slot` bytes; checks the headers; returns the flags.
std::vector<std::int64_t> gather_checked(communicator& comm, const std::string& what, const std::string& signature,
                                         std::int64_t flag, std::span<const std::byte> payload, std::size_t slot,
                                         std::vector<std::byte>& all) {
  const auto n = static_cast<std::size_t>(comm.size());
  const std::size_t unit = header_bytes + slot;
  std::vector<std::byte> mine(unit);
  const std::int64_t header[2] = {static_cast<std::int64_t>(crc32(signature)), flag};
  std::memcpy(mine.data(), header, header_bytes);
  if (!payload.empty())
    std::memcpy(mine.data() + header_bytes, payload.data(), payload.size());
  all.resize(unit * n);
  comm.all_gather(mine.data(), all.data(), unit, dtype::uint8);
  std::vector<int> differ;
  std::vector<std::int64_t> flags(n);
  std::int64_t first_crc = 0;
  for (std::size_t r = 0; r < n; ++r) {
    std::int64_t h[2];
    std::memcpy(h, all.data() + r * unit, header_bytes);
    if (r == 0)
      first_crc = h[0];
    flags[r] = h[1];
    if (h[0] != first_crc)
      differ.push_back(comm.processes()[r]);
  }
  if (!differ.empty()) {
    std::string list;
    for (std::size_t k = 0; k < differ.size(); ++k)
      list += (k ? ", " : "") + std::to_string(differ[k]);
    throw value_error(what + ": every process must pass a tree of the same structure, shapes and dtypes, but "
                      + (differ.size() == 1 ? "process " : "processes ") + list + " passed another than process "
                      + std::to_string(comm.processes()[0]) + " (this process: " + signature + ")");
  }
  return flags;
}

} // namespace

std::vector<std::int64_t> agree_on_tree(communicator& comm, const std::string& what, const std::string& signature,
                                        std::int64_t flag) {
  std::vector<std::byte> all;
  return gather_checked(comm, what, signature, flag, {}, 0, all);
}

std::vector<std::int64_t> agree_on_small_tree(communicator& comm, const std::string& what, const std::string& signature,
                                              std::int64_t flag, std::span<const std::byte> payload,
                                              std::vector<std::byte>& gathered) {
  if (payload.size() > small_tree_bytes)
    throw value_error("agree_on_small_tree: a payload of " + std::to_string(payload.size()) + " bytes is not small");
  std::vector<std::byte> all;
  auto flags = gather_checked(comm, what, signature, flag, payload, small_tree_bytes, all);
  const std::size_t unit = header_bytes + small_tree_bytes;
  gathered.resize(payload.size() * flags.size());
  for (std::size_t r = 0; r < flags.size(); ++r)
    if (!payload.empty())
      std::memcpy(gathered.data() + r * payload.size(), all.data() + r * unit + header_bytes, payload.size());
  return flags;
}

} // namespace am::detail
