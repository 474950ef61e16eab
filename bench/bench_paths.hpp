/// Where the benchmarks' peer scripts lie (bench/ of the source tree): recorded at configure time in
/// one generated file (bench/CMakeLists.txt) rather than as a compile definition, so that the
/// benchmarks compile the same in any clone and hit the compiler cache.
#pragma once

#include <string>

namespace am::bench {

/// The bench/ folder of the source tree.
const std::string& source_dir();

} // namespace am::bench
