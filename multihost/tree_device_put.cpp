#include "actormesh/multihost/tree_device_put.hpp"

#include "actormesh/actors/errors.hpp"

namespace am::detail {

void check_shardings_structure(const tree_def& values, const tree_def& shardings) {
  if (values != shardings)
    throw value_error("device_put: the shardings must be one sharding or a tree of the values' structure "
                      + values.to_string() + ", but their structure is " + shardings.to_string());
}

} // namespace am::detail
