/// The messages of single-controller mode (doc/architecture.md "Single-controller mode"): what the
/// controller asks a worker's call server to do with the worker's devices, and the answers. They
/// travel as byte strings in CAF messages of built-in types (no type registration across the
/// network) and every field is checked on decoding: a malformed request is refused with
/// am::value_error and the worker keeps serving. Internal.
#pragma once

#include "actors/program.hpp"

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace am::detail::remote {

/// What a request asks for.
enum class request_kind : std::uint8_t {
  execute = 1, ///< run `code` on `device` over `inputs`; the outputs become handles `outputs`
  upload,      ///< `bytes` of `type` onto `device` as handle outputs[0]
  fetch,       ///< the bytes of handle inputs[0], answered under id outputs[0]
  release,     ///< forget handles `inputs` (the controller dropped them)
  send,        ///< send handle inputs[0] (on `device`) to process `peer` with `tag` (data plane)
  receive,     ///< receive a value of `type` from process `peer` with `tag` onto `device` as outputs[0]
  stop,        ///< the controller is stopping: the worker's serve() returns
};

/// One request from the controller. Handles are numbers the controller chooses (unique in its
/// process), so that a later request can name an output before the worker has computed it.
struct request {
  request_kind kind = request_kind::execute;
  std::uint64_t caller = 0; ///< the controller's caller (user thread): each keeps its own lane
  int device = 0;           ///< global id of a device of the worker
  std::shared_ptr<const program> code;
  std::vector<std::uint64_t> inputs;
  std::vector<std::uint64_t> outputs;
  value_type type;
  std::string bytes;
  int peer = 0;
  std::uint32_t tag = 0;
};

std::string encode(const request& r);

/// Decodes and checks a request (counts, sizes, codes, the program's structure); throws
/// am::value_error ("malformed single-controller request: ...").
request decode_request(const std::string& bytes);

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
  std::string bytes;         ///< a fetch's data
};

std::string encode(const reply& r);
reply decode_reply(const std::string& bytes);

/// The reply that carries `error` (its kind and text) for `id`.
reply error_reply(std::uint64_t id, const std::exception_ptr& error);

/// The exception a failed reply stands for (the same kind as on the worker).
std::exception_ptr error_of(const reply& r);

} // namespace am::detail::remote
