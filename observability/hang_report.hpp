/// What `actormesh inspect-hang` prints: from every process's flight recorder dump, which process
/// stopped at which collective and what the others were waiting for.
#pragma once

#include "observability/flight_dump.hpp"

#include <string>
#include <vector>

namespace am::observability {

/// A report over the dumps of one cluster (one per process, any order). For every communicator
/// (sequence) whose processes did not all complete the same last step, it names the step the
/// furthest processes reached, who issued it and in what state, who never issued it (and where
/// each of those stopped), any desync (different operations at one step), and participants that
/// wrote no dump. Sequences where every process that wrote a dump completed the same last step
/// are summed up in one line each.
std::string explain_hang(const std::vector<flight_dump>& dumps);

} // namespace am::observability
