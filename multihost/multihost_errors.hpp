/// The errors the multihost utilities add to actors/errors.hpp.
#ifndef ACTORMESH_MULTIHOST_MULTIHOST_ERRORS_HPP
#define ACTORMESH_MULTIHOST_MULTIHOST_ERRORS_HPP

#include "actormesh/actors/errors.hpp"

namespace am {

/// A check across processes failed (Python's AssertionError, which JAX's assert_equal and
/// sync_global_devices raise): raised on every process alike.
class assertion_error : public error {
public:
  using error::error;
};

} // namespace am

#endif // ACTORMESH_MULTIHOST_MULTIHOST_ERRORS_HPP
