// The `actormesh` command-line tool: every error prints one line on stderr and exits with status 2.
#include "tools/commands.hpp"

#include <iostream>

int main(int argc, char** argv) {
  return am::tools::run_cli(argc, argv, std::cout, std::cerr);
}
