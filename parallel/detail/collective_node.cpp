#include "parallel/detail/collective_node.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/parallel/collectives.hpp"
#include "actormesh/sharding/detail/trace.hpp"

#include <deque>
#include <mutex>

namespace am::detail {

namespace {

/// Every collective traced so far, by number (a deque: references stay valid as it grows). Traces
/// happen once per signature, so this stays small.
struct registry {
  std::mutex mutex;
  std::deque<collective> entries;
};

registry& collectives() {
  static registry r;
  return r;
}

} // namespace

const char* collective_name(collective_kind k) noexcept {
  switch (k) {
    case collective_kind::psum: return "psum";
    case collective_kind::pmean: return "pmean";
    case collective_kind::pmax: return "pmax";
    case collective_kind::pmin: return "pmin";
    case collective_kind::all_gather: return "all_gather";
    case collective_kind::ppermute: return "ppermute";
    case collective_kind::psum_scatter: return "psum_scatter";
    case collective_kind::axis_index: return "axis_index";
  }
  return "collective";
}

const collective& collective_of(const node& n) {
  auto& r = collectives();
  std::lock_guard<std::mutex> guard(r.mutex);
  return r.entries.at(static_cast<std::size_t>(n.attrs.at(0)));
}

array record_collective(collective c, const std::vector<array>& operand, shape_t shape, am::dtype type,
                        sharding_ptr layout) {
  if (current_trace() == nullptr)
    throw value_error("unbound axis name: " + c.axis_name);
  node n;
  n.kind = node_kind::collective;
  n.shape = std::move(shape);
  n.type = type;
  n.layout = std::move(layout);
  {
    auto& r = collectives();
    std::lock_guard<std::mutex> guard(r.mutex);
    n.attrs = {static_cast<std::int64_t>(r.entries.size())};
    r.entries.push_back(std::move(c));
  }
  return apply(std::move(n), operand);
}

array call_collective(const collective& c, const array& x, std::int64_t axis) {
  switch (c.kind) {
    case collective_kind::psum: return psum(x, c.axis_name);
    case collective_kind::pmean: return pmean(x, c.axis_name);
    case collective_kind::pmax: return pmax(x, c.axis_name);
    case collective_kind::pmin: return pmin(x, c.axis_name);
    case collective_kind::all_gather: return all_gather(x, c.axis_name, axis, c.tiled);
    case collective_kind::ppermute: return ppermute(x, c.axis_name, c.perm);
    case collective_kind::psum_scatter: return psum_scatter(x, c.axis_name, axis, c.tiled);
    case collective_kind::axis_index: return axis_index(c.axis_name);
  }
  throw runtime_error("internal: unknown collective");
}

} // namespace am::detail
