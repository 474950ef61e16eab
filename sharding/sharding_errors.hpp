/// The sharding errors JAX names as their own classes; both are ValueErrors in JAX, so both derive
/// from am::value_error and a caller may catch either the specific class or the general one.
#ifndef ACTORMESH_SHARDING_SHARDING_ERRORS_HPP
#define ACTORMESH_SHARDING_SHARDING_ERRORS_HPP

#include "actormesh/actors/errors.hpp"

namespace am {

/// A NamedSharding spec maps one mesh axis to two positional dimensions (JAX's DuplicateSpecError).
class duplicate_spec_error : public value_error {
public:
  using value_error::value_error;
};

/// An array dimension is not divisible by the number of times a sharding splits it (JAX's
/// IndivisibleError).
class indivisible_error : public value_error {
public:
  using value_error::value_error;
};

} // namespace am

#endif // ACTORMESH_SHARDING_SHARDING_ERRORS_HPP
