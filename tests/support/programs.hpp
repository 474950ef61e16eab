// Small programs and host helpers shared by the tests.
#pragma once

#include <actormesh.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

namespace am::testing {

/// x -> x * 3 + step over int64[n]: a chain of these gives a value that depends on the order run.
inline std::shared_ptr<const program> step_program(std::int64_t step, std::int64_t n = 4) {
  value_type t{dtype::int64, {n}};
  program_builder b("step" + std::to_string(step));
  auto x = b.parameter(t);
  auto y = b.binary(opcode::add, b.binary(opcode::multiply, x, b.constant(3, t)),
                    b.constant(static_cast<double>(step), t));
  b.output(y);
  return b.build();
}

/// The value a chain of `steps` step programs gives from `start`, computed on the host (wrapping).
inline std::int64_t expected_chain(std::int64_t start, std::int64_t first_step, int steps) {
  auto x = static_cast<std::uint64_t>(start);
  for (int s = 0; s < steps; ++s)
    x = x * 3 + static_cast<std::uint64_t>(first_step + s);
  return static_cast<std::int64_t>(x);
}

/// The bytes of a vector, for upload.
template <class T>
std::vector<std::byte> to_bytes(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

/// A vector read back from fetched bytes.
template <class T>
std::vector<T> from_bytes(const std::vector<std::byte>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

} // namespace am::testing
