/// The messages of single-controller mode (doc/architecture.md "Single-controller mode"): what the
/// controller asks a worker's call server to do with the worker's devices, and the answers. They
/// travel as byte strings in CAF messages of built-in types (no type registration across the
/// network) and every field is checked on decoding: a malformed request is refused with
/// am::value_error and the worker keeps serving. Internal.
#pragma once

#include "actormesh/actors/program.hpp"

#include <cstdint>
#include <exception>
#include <list>
#include <string_view>
#include <unordered_map>
#include <memory>
#include <string>
#include <vector>

namespace am::detail::remote {

/// What a request asks for.
enum class request_kind : std::uint8_t {
  execute = 1, ///< run `code` on `device` over `inputs`; the outputs become handles `outputs`
  upload,      ///< `bytes` of `type` onto `device` as handle outputs[0]
  fetch,       ///< the bytes of handle inputs[0], answered under id outputs[0]
  release,     ///< only the `released` handles below (the controller dropped them)
  send,        ///< send handle inputs[0] (on `device`) to process `peer` with `tag` (data plane)
  receive,     ///< receive a value of `type` from process `peer` with `tag` onto `device` as outputs[0]
  stop,        ///< the controller is stopping: the worker's serve() returns
  host_call,   ///< run `bytes` with host service `service` in this caller's host lane over `inputs`;
               ///< outputs[0] is the reply id, the rest are handles for the service's outputs
  retire_caller, ///< the controller thread `caller` has ended: its lanes here go once they are idle
};

/// One request from the controller. Handles are numbers the controller chooses (unique in its
/// process), so that a later request can name an output before the worker has computed it.
struct request {
  request_kind kind = request_kind::execute;
  std::uint64_t caller = 0; ///< the controller's caller (user thread): each keeps its own lane
  int device = 0;           ///< global id of a device of the worker
  std::shared_ptr<const program> code;
  std::string program_bytes; ///< `code` encoded (encode_program); sent instead of encoding `code` again
  std::vector<std::uint64_t> inputs;
  std::vector<std::uint64_t> outputs;
  value_type type;
  std::string bytes;
  int peer = 0;
  std::uint32_t tag = 0;
  std::string service; ///< a host call's service (devices/remote/host_services.hpp)
  /// Handles the controller let go of since its last request to this worker, freed before this
  /// request runs (any request can carry them; `release` carries nothing else).
  std::vector<std::uint64_t> released;
};

/// A program as it travels (instruction by instruction).
std::string encode_program(const program& p);

/// Decodes and validates a program; throws am::value_error.
std::shared_ptr<const program> decode_program(const std::string& bytes);

/// The programs a worker has decoded, by their bytes, the most recently used kept: a jitted
/// function sends the same program with every call, and a program decoded once is compiled once
/// by the device (its executor caches by program object). Not thread-safe (one call server's).
class program_cache {
public:
  explicit program_cache(std::size_t capacity = 256) : capacity_(capacity) {}

  /// The program of `bytes`, decoded (and validated) on first sight.
  std::shared_ptr<const program> get(const std::string& bytes);

private:
  std::size_t capacity_;
  std::list<std::pair<std::string, std::shared_ptr<const program>>> entries_; ///< most recent first
  std::unordered_map<std::string_view, decltype(entries_)::iterator> index_;  ///< views into entries_
};

std::string encode(const request& r);

/// Decodes and checks a request (counts, sizes, codes, the program's structure); throws
/// am::value_error ("malformed single-controller request: ..."). Programs come from `cache` when
/// given.
request decode_request(const std::string& bytes, program_cache* cache = nullptr);

/// How a request ended, with the error kind the caller rethrows.
enum class reply_status : std::uint8_t {
  ok,
  value_error,
  type_error,
  runtime_error,
  timeout,
  out_of_memory,
  process_failure,
  desync,
};

/// The answer for one output handle or fetch id.
struct reply {
  std::uint64_t id = 0;
  reply_status status = reply_status::ok;
  std::string message;       ///< the error's text
  int process = -1;          ///< a process failure's process
  std::vector<int> devices;  ///< ... and its devices
  std::string bytes;         ///< a fetch's data, a host call's answer
  std::vector<std::uint64_t> handles; ///< a host call's shards the worker named (top bit set)
};

std::string encode(const reply& r);
reply decode_reply(const std::string& bytes);

/// The reply that carries `error` (its kind and text) for `id`.
reply error_reply(std::uint64_t id, const std::exception_ptr& error);

/// The exception a failed reply stands for (the same kind as on the worker).
std::exception_ptr error_of(const reply& r);

} // namespace am::detail::remote
