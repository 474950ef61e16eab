// `actormesh inspect-hang DIR`: reads the flight recorder dumps every process of a cluster wrote into
// DIR when a collective or barrier timed out, desynced or met a failed process
// (observability/flight_recorder.hpp), and prints which process stopped at which collective and
// what the others were waiting for (observability/hang_report.hpp).
#include "tools/commands.hpp"

#include "observability/flight_dump.hpp"
#include "observability/hang_report.hpp"

#include <memory>
#include <ostream>
#include <string>

namespace am::tools {

void add_inspect_hang_command(CLI::App& app, std::ostream& out) {
  auto dir = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("inspect-hang",
                                 "Explain a hang or failure of collectives from the flight recorder dumps of every "
                                 "process (AM_FLIGHT_RECORDER_DIR, default /tmp/actormesh-flight-recorder)");
  cmd->add_option("dir", *dir, "Directory holding flight_recorder.<process>.txt files")->required();
  cmd->callback([dir, &out] { out << observability::explain_hang(observability::read_flight_dumps(*dir)); });
}

} // namespace am::tools
