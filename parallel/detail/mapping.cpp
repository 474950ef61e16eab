#include "parallel/detail/mapping.hpp"
#include "actormesh/actors/shape.hpp"

#include "actormesh/actors/errors.hpp"
#include "sharding/detail/array_state.hpp"

#include <map>

namespace am::detail {

namespace {

std::string tuple_of_stars(std::size_t n) {
  std::string s = "PyTreeDef((";
  for (std::size_t k = 0; k < n; ++k)
    s += k ? ", *" : "*";
  return s + (n == 1 ? ",))" : "))");
}

std::string spec_text(const axis_specs& specs) {
  std::string s = "(";
  for (std::size_t k = 0; k < specs.size(); ++k)
    s += (k ? ", " : "") + (specs[k].mapped() ? std::to_string(*specs[k].axis) : std::string("None"));
  return s + (specs.size() == 1 ? ",)" : ")");
}

} // namespace

std::vector<axis_spec> match_axes(const axis_specs& specs, std::size_t count, const char* what, const char* which) {
  if (specs.size() == count)
    return specs;
  if (specs.size() == 1)
    return std::vector<axis_spec>(count, specs.front());
  throw value_error(std::string(what) + " " + which + " specification must be a tree prefix of the corresponding "
                    "value, got specification " + spec_text(specs) + " for value tree " + tuple_of_stars(count) + ".");
}

std::vector<axis_spec> normalize_in_axes(const std::vector<axis_spec>& axes, const std::vector<array>& args,
                                         const char* what) {
  auto out = axes;
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (!out[k].mapped())
      continue;
    auto a = *out[k].axis;
    auto rank = args[k].ndim();
    if (a < -rank || a >= rank)
      throw value_error(std::string(what) + " was requested to map its argument along axis " + std::to_string(a)
                        + ", which implies that its rank should be at least " + std::to_string((a < 0 ? -a : a + 1))
                        + ", but is only " + std::to_string(rank) + " (its shape is " + shape_to_string(args[k].shape())
                        + ")");
    out[k].axis = a < 0 ? a + rank : a;
  }
  return out;
}

std::int64_t mapped_size(const std::vector<axis_spec>& axes, const std::vector<array>& args, const char* what) {
  std::map<std::int64_t, int> counts;
  for (std::size_t k = 0; k < args.size(); ++k)
    if (axes[k].mapped())
      ++counts[args[k].shape()[static_cast<std::size_t>(*axes[k].axis)]];
  if (counts.empty()) {
    if (std::string(what) == "pmap")
      throw value_error("pmap requires at least one argument with a mapped axis.");
    throw value_error(std::string(what) + " must have at least one non-None value in in_axes or axis_size must be "
                      "specified");
  }
  if (counts.size() > 1) {
    std::string msg = std::string(what) + " got inconsistent sizes for array axes to be mapped:\n";
    for (std::size_t k = 0; k < args.size(); ++k)
      if (axes[k].mapped())
        msg += "  * axis " + std::to_string(*axes[k].axis) + " of argument " + std::to_string(k) + " of type "
               + aval_text(args[k].dtype(), args[k].shape()) + " has size "
               + std::to_string(args[k].shape()[static_cast<std::size_t>(*axes[k].axis)]) + "\n";
    msg.pop_back();
    throw value_error(msg);
  }
  return counts.begin()->first;
}

array place_output(const batched& out, const axis_spec& spec, const batch_axis& axis, const char* what) {
  if (!spec.mapped()) {
    if (out.mapped)
      throw value_error(std::string("at ") + what + " out_axes, got axis spec None but output was batched on axis 0");
    return out.value;
  }
  auto v = as_mapped(out, axis);
  auto rank = v.ndim();
  auto a = *spec.axis;
  if (a < -rank || a >= rank)
    throw value_error(std::string(what) + " out_axes " + std::to_string(a) + " is out of bounds for an output of rank "
                      + std::to_string(rank));
  return moveaxis(v, 0, a < 0 ? a + rank : a);
}

} // namespace am::detail
