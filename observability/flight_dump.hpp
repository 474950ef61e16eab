/// The text format of a flight recorder dump, written by each process and read by
/// `actormesh inspect-hang`. One header line per field, then one tab-separated line per entry:
///
///   actormesh flight recorder 1
///   process 2
///   reason <why it was written>
///   dumped_us <system clock, microseconds since the epoch>
///   entry <record> <communicator> <step> <op> <dtype> <shape> <state> <issued_us> <checked_us>
///         <ended_us> <participants, comma-separated> <signature> <error>      (tab-separated)
///
/// Tabs and line breaks inside a field are written as spaces.
#pragma once

#include "observability/flight_recorder.hpp"

#include <iosfwd>
#include <string>
#include <vector>

namespace am::observability {

/// One process's dump.
struct flight_dump {
  int process = -1;
  std::string reason;
  std::int64_t dumped_us = 0;
  std::vector<flight_entry> entries; ///< oldest first
};

/// Writes `dump` in the format above.
void write_flight_dump(std::ostream& out, const flight_dump& dump);

/// Parses a dump; throws am::value_error naming `source` and the line for malformed text.
flight_dump parse_flight_dump(const std::string& text, const std::string& source);

/// Reads and parses the dump at `path` (at most 64 MiB); am::value_error when it cannot be read.
flight_dump read_flight_dump(const std::string& path);

/// The dumps of every process in `directory` (files flight_recorder.<n>.txt), by process; throws
/// am::value_error when the directory holds none or one is malformed.
std::vector<flight_dump> read_flight_dumps(const std::string& directory);

} // namespace am::observability
