#include "parallel/detail/axis_env.hpp"

#include "actormesh/actors/errors.hpp"

#include <vector>

namespace am::detail {

namespace {
thread_local std::vector<bound_axis> bound;
}

axis_scope::axis_scope(bound_axis axis) : bound_(!axis.name.empty()) {
  if (bound_)
    bound.push_back(std::move(axis));
}

axis_scope::~axis_scope() {
  if (bound_)
    bound.pop_back();
}

const bound_axis& lookup_axis(const std::string& name) {
  for (auto it = bound.rbegin(); it != bound.rend(); ++it)
    if (it->name == name)
      return *it;
  throw value_error("unbound axis name: " + name);
}

} // namespace am::detail
