// The `actormesh` command-line tool. Library errors print their message and exit with status 2.
#include "tools/commands.hpp"

#include "actors/errors.hpp"

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  CLI::App app{"actormesh: actor-model runtime for sharded arrays"};
  app.require_subcommand(1);
  am::tools::add_info_command(app);
  am::tools::add_visualize_command(app);
  am::tools::add_shards_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const am::error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
