/// The flight recorder: every process keeps its last N collectives and barriers in a ring buffer
/// (sequence number, communicator, operation, dtype and shape, state, timestamps), and writes it
/// out when one of them times out, desyncs or meets a failed process, so that
/// `actormesh inspect-hang DIR` can say which process stopped where and what the others waited for.
///
/// Configuration (read once, when the process first records):
///   AM_FLIGHT_RECORDER_ENTRIES   entries kept per process (default 256; 0 turns the recorder off)
///   AM_FLIGHT_RECORDER_DIR       where dumps go (default /tmp/actormesh-flight-recorder); each
///                                process writes flight_recorder.<process>.txt there
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace am::observability {

/// Where a recorded operation got to.
enum class op_state {
  issued,    ///< called, waiting for the cluster's check (every participant issuing it)
  checked,   ///< every participant issued it alike; its bytes are moving
  completed, ///< returned normally
  failed,    ///< ended with an error (kept in the entry)
};

/// The name of a state as dumps write it ("issued", ...).
const char* name(op_state s) noexcept;

/// One collective or barrier as this process saw it.
struct flight_entry {
  std::uint64_t record = 0;      ///< this process's running number of recorded operations
  std::string communicator;      ///< the sequence it belongs to (communicator name, barrier group)
  std::uint64_t step = 0;        ///< its sequence number there
  std::string op;                ///< the operation ("all_gather", "barrier", ...)
  std::string dtype;             ///< element type ("" when none)
  std::string shape;             ///< element count or shape as written, e.g. "[1024]" ("" when none)
  std::string signature;         ///< the whole signature the cluster compares
  std::vector<int> participants; ///< process indices
  op_state state = op_state::issued;
  std::int64_t issued_us = 0;    ///< system clock, microseconds since the epoch
  std::int64_t checked_us = 0;   ///< 0 until checked
  std::int64_t ended_us = 0;     ///< 0 until completed or failed
  std::string error;             ///< the error of a failed operation
};

/// A ring buffer of the last `capacity` operations of one process. Thread-safe.
class flight_recorder {
public:
  /// Keeps the last `capacity` entries (0: records nothing).
  explicit flight_recorder(std::size_t capacity);

  /// Records a newly issued operation; returns its record number (0 when the recorder is off).
  std::uint64_t issue(std::string communicator, std::uint64_t step, std::string op, std::string dtype,
                      std::string shape, std::string signature, std::vector<int> participants);

  /// Moves record `record` to `state` (stamping the time); `error` for a failure. A record that
  /// has left the buffer is ignored.
  void mark(std::uint64_t record, op_state state, const std::string& error = "");

  /// The entries kept, oldest first.
  std::vector<flight_entry> entries() const;

  /// The most entries kept.
  std::size_t capacity() const noexcept { return capacity_; }

private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::deque<flight_entry> ring_;
  std::uint64_t next_ = 1;
};

/// This process's recorder, sized by AM_FLIGHT_RECORDER_ENTRIES on first use.
flight_recorder& process_flight_recorder();

/// The dump directory: AM_FLIGHT_RECORDER_DIR, else /tmp/actormesh-flight-recorder.
std::string flight_recorder_directory();

/// Writes this process's recorder to `<flight_recorder_directory()>/flight_recorder.<process>.txt`
/// (through a temporary file and a rename, so a reader never sees half a dump), naming `reason`.
/// Returns the path, or "" when the recorder is off or the write failed (a dump never throws:
/// it runs while an error is being reported).
std::string dump_flight_recorder(int process, const std::string& reason) noexcept;

/// " (flight recorder: PATH)" for a dump just written to PATH, "" for none: what an error message
/// that triggered a dump ends with.
std::string flight_recorder_note(const std::string& path);

} // namespace am::observability
