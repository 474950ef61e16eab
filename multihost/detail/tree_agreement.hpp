/// The first step of every multihost utility: the processes check that they passed trees of the
/// same structure, shapes and dtypes, and exchange one small flag each. Small trees travel in the
/// same collective (one all-gather instead of two). Internal.
#pragma once

#include "actormesh/devices/collectives/communicator.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace am::detail {

/// Trees of at most this many bytes go with the agreement (padded to it, so that every process
/// issues the same collective whatever its own tree holds).
inline constexpr std::size_t small_tree_bytes = 4096;

/// All-gathers (CRC-32 of `signature`, `flag`) over `comm`; returns every rank's flag. Throws
/// am::value_error on every process, naming the processes whose signature differs from rank 0's,
/// when they are not all the same ("<what>: every process must pass a tree of the same structure,
/// shapes and dtypes, but processes [1] passed another than process 0: ...").
std::vector<std::int64_t> agree_on_tree(communicator& comm, const std::string& what, const std::string& signature,
                                        std::int64_t flag);

/// agree_on_tree with `payload` (at most small_tree_bytes) gathered in the same all-gather:
/// `gathered` receives every rank's payload, rank-major, payload.size() bytes each.
std::vector<std::int64_t> agree_on_small_tree(communicator& comm, const std::string& what, const std::string& signature,
                                              std::int64_t flag, std::span<const std::byte> payload,
                                              std::vector<std::byte>& gathered);

} // namespace am::detail
