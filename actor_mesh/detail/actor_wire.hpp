/// The messages between the actor gateways of two processes: a call of an endpoint of an actor
/// there, and its answer. Plain data and a checked codec (actors/wire_codec.hpp): a malformed
/// message is refused with am::value_error, never a crash or an unbounded allocation. Internal.
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

namespace am::detail {

/// A call (request 0: a one-way message, no answer) of endpoint `endpoint` of the actor of rank
/// `rank` of mesh `mesh` (the key every process gave the collective spawn).
struct actor_call {
  std::string mesh;
  std::int32_t rank = 0;
  std::string endpoint;
  std::uint64_t request = 0;
  std::string arguments; ///< actors/value_wire.hpp's encoding of the argument tuple
};

/// The answer to request `request`: the encoded value, or the exception's type and text.
struct actor_answer {
  std::uint64_t request = 0;
  bool ok = false;
  std::string value;
  std::string error_type;
  std::string error_text;
};

std::string encode_call(const actor_call& call);
actor_call decode_call(std::string_view bytes);
std::string encode_answer(const actor_answer& answer);
actor_answer decode_answer(std::string_view bytes);

/// An answer carrying `error` (its type demangled, and its text).
actor_answer error_answer(std::uint64_t request, const std::exception_ptr& error);

/// The exception an error answer stands for: actormesh's errors and the standard ones are rebuilt
/// as themselves (am::actor_failure_error with `rank`), anything else as am::remote_error.
std::exception_ptr rebuild_error(const actor_answer& answer, int rank);

} // namespace am::detail
