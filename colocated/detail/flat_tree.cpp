#include "actormesh/colocated/detail/flat_tree.hpp"

namespace am::detail {

void throw_not_an_array(std::string_view type_name) {
  throw value_error("colocated_python only supports jax.Array (am::array) as input and output, but got "
                    + std::string(type_name) + ".");
}

} // namespace am::detail
