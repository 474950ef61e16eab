#include "actormesh/parallel/collectives.hpp"

#include "actormesh/actors/errors.hpp"
#include "parallel/detail/axis_env.hpp"
#include "parallel/detail/collective_node.hpp"
#include "sharding/detail/sharding_rules.hpp"

#include <set>
#include <sstream>

namespace am {

namespace {

using detail::collective;
using detail::collective_kind;

array same_shape(collective_kind k, const array& x, const std::string& axis_name) {
  auto& axis = detail::lookup_axis(axis_name);
  collective c{k, axis_name, axis.size, 0, false, {}};
  return detail::record_collective(std::move(c), {x}, x.shape(), x.dtype(), x.sharding());
}

/// `axis` counted from the end when negative; out of [-rank, rank) an error in numpy's words (JAX's
/// for all_gather: "axis -9 is out of bounds for array of dimension 2"), after "`what`: " when
/// `what` is not empty (psum_scatter, where JAX only fails with an IndexError).
std::int64_t normalized(std::int64_t axis, std::int64_t rank, const char* what) {
  auto given = axis;
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    throw value_error((*what ? std::string(what) + ": " : std::string()) + "axis " + std::to_string(given)
                      + " is out of bounds for array of dimension " + std::to_string(rank));
  return axis;
}

std::string perm_text(const std::vector<std::pair<int, int>>& perm) {
  std::ostringstream out;
  out << '(';
  for (std::size_t k = 0; k < perm.size(); ++k)
    out << (k ? ", " : "") << '(' << perm[k].first << ", " << perm[k].second << ')';
  out << (perm.size() == 1 ? ",)" : ")");
  return out.str();
}

} // namespace

array psum(const array& x, const std::string& axis_name) { return same_shape(collective_kind::psum, x, axis_name); }
array pmean(const array& x, const std::string& axis_name) { return same_shape(collective_kind::pmean, x, axis_name); }
array pmax(const array& x, const std::string& axis_name) { return same_shape(collective_kind::pmax, x, axis_name); }
array pmin(const array& x, const std::string& axis_name) { return same_shape(collective_kind::pmin, x, axis_name); }

array all_gather(const array& x, const std::string& axis_name, std::int64_t axis, bool tiled) {
  auto& bound = detail::lookup_axis(axis_name);
  auto rank = x.ndim();
  axis = normalized(axis, tiled ? rank : rank + 1, "");
  auto shape = x.shape();
  if (tiled)
    shape[static_cast<std::size_t>(axis)] *= bound.size;
  else
    shape.insert(shape.begin() + axis, bound.size);
  collective c{collective_kind::all_gather, axis_name, bound.size, axis, tiled, {}};
  return detail::record_collective(std::move(c), {x}, shape, x.dtype(), detail::replicated_like(x.sharding()));
}

array ppermute(const array& x, const std::string& axis_name, const std::vector<std::pair<int, int>>& perm) {
  auto& bound = detail::lookup_axis(axis_name);
  std::set<int> sources, destinations;
  for (auto [s, d] : perm) {
    if (s < 0 || s >= bound.size || d < 0 || d >= bound.size)
      throw value_error("ppermute: device " + std::to_string(s < 0 || s >= bound.size ? s : d)
                        + " is out of range for axis '" + axis_name + "' of size " + std::to_string(bound.size));
    sources.insert(s);
    destinations.insert(d);
  }
  if (sources.size() != perm.size() || destinations.size() != perm.size())
    throw value_error("ppermute sources and destinations must be unique, got " + perm_text(perm) + ".");
  collective c{collective_kind::ppermute, axis_name, bound.size, 0, false, perm};
  return detail::record_collective(std::move(c), {x}, x.shape(), x.dtype(), x.sharding());
}

array psum_scatter(const array& x, const std::string& axis_name, std::int64_t scatter_dimension, bool tiled) {
  auto& bound = detail::lookup_axis(axis_name);
  auto dim = normalized(scatter_dimension, x.ndim(), "psum_scatter");
  auto shape = x.shape();
  auto size = shape[static_cast<std::size_t>(dim)];
  if (tiled) {
    if (size % bound.size != 0)
      throw value_error("tiled reduce_scatter operand scatter dimension size " + std::to_string(size)
                        + " must be divisible by shard_count " + std::to_string(bound.size));
    shape[static_cast<std::size_t>(dim)] = size / bound.size;
  } else {
    if (size != bound.size)
      throw value_error("reduce_scatter operand scatter dimension size " + std::to_string(size)
                        + " must match shard count " + std::to_string(bound.size));
    shape.erase(shape.begin() + dim);
  }
  collective c{collective_kind::psum_scatter, axis_name, bound.size, dim, tiled, {}};
  return detail::record_collective(std::move(c), {x}, shape, x.dtype(), detail::replicated_like(x.sharding()));
}

array axis_index(const std::string& axis_name) {
  auto& bound = detail::lookup_axis(axis_name);
  collective c{collective_kind::axis_index, axis_name, bound.size, 0, false, {}};
  return detail::record_collective(std::move(c), {}, {}, am::dtype::int32, bound.layout);
}

std::int64_t axis_size(const std::string& axis_name) {
  return detail::lookup_axis(axis_name).size;
}

} // namespace am
