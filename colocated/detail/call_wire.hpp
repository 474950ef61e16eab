/// A colocated call as it travels to the worker that runs it (single-controller mode): what to run
/// (a function's name, or an object's method with what builds the object there), the specs of its
/// inputs and the call's devices, and for an asynchronous call the promised output specs. Only
/// names, specs and encoded constructor arguments travel; the shards go by handle beside it.
/// Decoding checks every field (am::value_error). Internal.
#pragma once

#include "actormesh/colocated/specs.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace am::detail {

/// What the worker is asked to do.
enum class worker_call_kind : std::uint8_t {
  learn = 1,      ///< run, and answer with the output specs and shards (a first call)
  async,          ///< run, resolving the promised outputs
  no_result,      ///< run a body that returns nothing; answer when it has run
  release_object, ///< the controller let go of the object: destroy its instances after their calls
};

/// The object a method call runs on, as the worker builds it.
struct worker_object {
  std::uint64_t uid = 0;    ///< the controller's id of the object
  std::string class_name;
  std::string constructor;  ///< the constructor's registry key (constructor_wire.hpp)
  std::string arguments;    ///< its encoded arguments
};

struct worker_call {
  worker_call_kind kind = worker_call_kind::learn;
  std::string name;          ///< the function's or the method's registered name
  bool is_method = false;
  worker_object object;      ///< for a method
  spec_tree in;              ///< the inputs' specs (global shardings)
  std::vector<int> devices;  ///< the call's devices, by id, in the call's order
  spec_tree out;             ///< async: the promised outputs' specs
};

std::string encode(const worker_call& c);
worker_call decode_worker_call(const std::string& bytes);

/// A spec tree (a learning call's answer: the outputs' specs).
std::string encode_specs(const spec_tree& specs);
spec_tree decode_specs(const std::string& bytes);

} // namespace am::detail
