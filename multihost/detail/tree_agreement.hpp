/// The first step of every multihost utility: the processes check that they passed trees of the
/// same structure, shapes and dtypes, and exchange one small flag each. Internal.
#pragma once

#include "devices/collectives/communicator.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace am::detail {

/// All-gathers (CRC-32 of `signature`, `flag`) over `comm`; returns every rank's flag. Throws
/// am::value_error on every process, naming the processes whose signature differs from rank 0's,
/// when they are not all the same ("<what>: every process must pass a tree of the same structure,
/// shapes and dtypes, but processes [1] passed another than process 0: ...").
std::vector<std::int64_t> agree_on_tree(communicator& comm, const std::string& what, const std::string& signature,
                                        std::int64_t flag);

} // namespace am::detail
