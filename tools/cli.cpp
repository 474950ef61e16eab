// The `actormesh` command line as a function: builds the parser, runs the chosen subcommand and turns
// every failure into one line and exit status 2 (CLI11's own codes, 104-114, mean nothing to a user).
#include "tools/commands.hpp"

#include "actormesh/build_config.hpp"
#include "actors/detail/closest_name.hpp"
#include "actormesh/actors/errors.hpp"

#include <exception>
#include <ostream>
#include <string>
#include <vector>

namespace am::tools {

namespace {

// The message on one line: a multi-line message (or one echoing a newline from an argument) would
// break "one line on stderr".
std::string one_line(std::string text) {
  for (auto& c : text)
    if (c == '\n' || c == '\r')
      c = ' ';
  return text;
}

/// The line that refuses `word` as a subcommand, listing `app`'s subcommands; "" when `word` names one.
std::string unknown_subcommand_line(CLI::App& app, const std::string& word) {
  std::string names;
  std::vector<std::string> known;
  for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->check_name(word))
      return {};
    names += (names.empty() ? "" : ", ") + sub->get_name();
    known.push_back(sub->get_name());
  }
  const auto nearest = detail::closest_name(word, known);
  return "Unknown subcommand '" + word + "'" + (nearest.empty() ? "" : " (did you mean " + nearest + "?)")
         + " (the subcommands: " + names + "; run with --help for usage)";
}

} // namespace

std::string error_line(const std::exception& e) {
  if (dynamic_cast<const am::error*>(&e) != nullptr)
    return one_line(e.what());
  return one_line(std::string("error: ") + e.what());
}

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"actormesh: actor-model runtime for sharded arrays"};
  app.require_subcommand(1);
  // `actormesh --version`: the library's version and the CAF it was built against, as other tools print theirs.
  app.set_version_flag("--version", std::string("actormesh ") + build::version + " (CAF " + build::caf_version + ")");
  add_info_command(app, out);
  add_visualize_command(app, out);
  add_shards_command(app, out);
  int status = 0; // set by a subcommand that has an exit status of its own (launch, worker)
  add_worker_command(app, out, err, status);
  add_launch_command(app, out, err, status);
  add_stress_command(app, out, err, status);
  add_inspect_hang_command(app, out);
  add_trace_command(app, out);
  // `actormesh help` is --help; a first word that names no subcommand is said so, with the list
  // (CLI11 alone answers "A subcommand is required", which reads as if none had been given).
  if (argc > 1 && std::string(argv[1]) == "help") {
    out << app.help();
    return 0;
  }
  if (argc > 1 && argv[1][0] != '-') {
    auto refusal = unknown_subcommand_line(app, argv[1]);
    if (!refusal.empty()) {
      err << one_line(refusal) << '\n';
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) // --help and friends: the text goes to `out`
      return app.exit(e, out, err);
    err << one_line(std::string(e.what()) + " (run with --help for usage)") << '\n';
    return 2;
  } catch (const std::exception& e) {
    err << error_line(e) << '\n';
    return 2;
  }
  return status;
}

} // namespace am::tools
