/// Where this build put what the tests start (the tool, the test programs, the demos) and where the
/// sources lie. Recorded once at configure time in one generated file (tests/CMakeLists.txt), not
/// as compile definitions of every test file: the paths differ from clone to clone, and a definition
/// on the command line would make every test file miss the compiler cache in a fresh clone.
#pragma once

#include <string>

namespace am::testing {

/// The actormesh tool's executable.
const std::string& tool_path();

/// The folder of the test programs (tests/programs/<name>.cpp is built there as <name>).
const std::string& test_program_dir();

/// The root of the source tree.
const std::string& source_dir();

/// The root of the build tree (the demos are under demos/).
const std::string& binary_dir();

/// The CMake generator and C++ compiler of this build (the install test configures a consumer with them).
const std::string& cmake_generator();
const std::string& cxx_compiler();

} // namespace am::testing
