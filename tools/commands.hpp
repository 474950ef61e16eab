/// The subcommands of the `actormesh` tool; each lives in its own file and registers itself here.
#pragma once

#include <CLI/CLI.hpp>

namespace am::tools {

/// `actormesh info`: build configuration, devices found, and why GPUs are absent when they are.
void add_info_command(CLI::App& app);

} // namespace am::tools
