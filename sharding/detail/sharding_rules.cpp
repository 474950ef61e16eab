#include "sharding/detail/sharding_rules.hpp"

#include "actormesh/sharding/named_sharding.hpp"
#include "actormesh/sharding/positional_sharding.hpp"
#include "actormesh/sharding/single_device_sharding.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace am::detail {

namespace {

/// Most entries the memo of derived shardings holds before it drops those whose input sharding
/// has been freed (and all of them, if most inputs are still alive).
constexpr std::size_t memo_bound = 4096;

/// A derived sharding and the input it was derived from, held weakly: the memo never keeps an
/// input alive, and an entry whose input is gone is never used (its address may belong to another).
struct memo_entry {
  std::weak_ptr<const sharding> in;
  sharding_ptr out;
};

/// Memo of derived shardings: (input sharding, rule, parameters) -> result, bounded (memo_bound)
/// and freed with the input shardings.
struct derived_memo {
  std::mutex mutex;
  std::map<std::tuple<const sharding*, std::string, std::vector<std::int64_t>>, memo_entry> entries;
};

derived_memo& the_memo() {
  static derived_memo m;
  return m;
}

sharding_ptr memoized(const sharding_ptr& in, const std::string& rule, const std::vector<std::int64_t>& params,
                      const std::function<sharding_ptr()>& make) {
  auto& [mutex, memo] = the_memo();
  auto key = std::make_tuple(in.get(), rule, params);
  {
    std::lock_guard<std::mutex> guard(mutex);
    auto it = memo.find(key);
    if (it != memo.end() && it->second.in.lock() == in)
      return it->second.out;
  }
  auto out = make();
  std::lock_guard<std::mutex> guard(mutex);
  memo[key] = memo_entry{in, out};
  if (memo.size() > memo_bound) {
    std::erase_if(memo, [](const auto& e) { return e.second.in.expired(); });
    if (memo.size() > memo_bound / 2)
      memo.clear(); // most inputs are alive: start again rather than sweep on every insertion
  }
  return out;
}

/// The spec entry of dim d (none beyond the spec's length).
spec_entry entry_at(const partition_spec& spec, std::size_t d) {
  return d < spec.size() ? spec[d] : spec_entry{};
}

/// True when `s` can stand unchanged for a result of rank `rank`: it is fully replicated and, when
/// named, has no spec entry past that rank (a one-device mesh with P('x') is fully replicated, but
/// P('x') is not valid for a scalar).
bool usable_unchanged(const sharding_ptr& s, std::size_t rank) {
  if (!s->is_fully_replicated())
    return false;
  auto* n = dynamic_cast<const named_sharding*>(s.get());
  return n == nullptr || n->spec().size() <= rank;
}

} // namespace

std::size_t derived_sharding_memo_size() {
  auto& m = the_memo();
  std::lock_guard<std::mutex> guard(m.mutex);
  return m.entries.size();
}

sharding_ptr replicated_like(const sharding_ptr& s) {
  if (usable_unchanged(s, 0))
    return s;
  return memoized(s, "replicated", {}, [&]() -> sharding_ptr {
    if (auto* n = dynamic_cast<const named_sharding*>(s.get()))
      return make_named_sharding(n->mesh(), partition_spec());
    if (auto* p = dynamic_cast<const positional_sharding*>(s.get()))
      return share(p->replicate());
    return s;
  });
}

sharding_ptr transposed(const sharding_ptr& s, const std::vector<std::int64_t>& perm) {
  if (s->is_fully_replicated())
    return s;
  return memoized(s, "transpose", perm, [&]() -> sharding_ptr {
    if (auto* n = dynamic_cast<const named_sharding*>(s.get())) {
      std::vector<spec_entry> entries;
      for (auto d : perm)
        entries.push_back(entry_at(n->spec(), static_cast<std::size_t>(d)));
      return make_named_sharding(n->mesh(), partition_spec(entries));
    }
    if (auto* p = dynamic_cast<const positional_sharding*>(s.get())) {
      std::vector<int> axes(perm.begin(), perm.end());
      return share(p->transpose(axes));
    }
    return s;
  });
}

sharding_ptr reduced(const sharding_ptr& s, std::size_t ndim, const std::vector<std::int64_t>& axes) {
  if (usable_unchanged(s, ndim - std::min(ndim, axes.size())))
    return s;
  auto params = axes;
  params.push_back(static_cast<std::int64_t>(ndim));
  return memoized(s, "reduce", params, [&]() -> sharding_ptr {
    if (auto* n = dynamic_cast<const named_sharding*>(s.get())) {
      std::vector<spec_entry> entries;
      for (std::size_t d = 0; d < ndim; ++d)
        if (std::find(axes.begin(), axes.end(), static_cast<std::int64_t>(d)) == axes.end())
          entries.push_back(entry_at(n->spec(), d));
      while (!entries.empty() && entries.back().is_none())
        entries.pop_back();
      return make_named_sharding(n->mesh(), partition_spec(entries));
    }
    return replicated_like(s);
  });
}

sharding_ptr reshaped(const sharding_ptr& s, std::size_t ndim, std::size_t kept) {
  if (usable_unchanged(s, kept))
    return s;
  return memoized(s, "reshape", {static_cast<std::int64_t>(ndim), static_cast<std::int64_t>(kept)},
                  [&]() -> sharding_ptr {
    if (auto* n = dynamic_cast<const named_sharding*>(s.get())) {
      for (std::size_t d = kept; d < ndim; ++d)
        if (!entry_at(n->spec(), d).is_none())
          return replicated_like(s);
      std::vector<spec_entry> entries;
      for (std::size_t d = 0; d < kept && d < n->spec().size(); ++d)
        entries.push_back(n->spec()[d]);
      return make_named_sharding(n->mesh(), partition_spec(entries));
    }
    return replicated_like(s);
  });
}

sharding_ptr dot_result(const sharding_ptr& x, const sharding_ptr& y) { return dot_result(x, 2, y, 2); }

sharding_ptr dot_result(const sharding_ptr& x, std::size_t x_rank, const sharding_ptr& y, std::size_t y_rank) {
  auto* nx = dynamic_cast<const named_sharding*>(x.get());
  auto* ny = dynamic_cast<const named_sharding*>(y.get());
  if (nx == nullptr)
    return x->is_fully_replicated() ? x : replicated_like(x);
  std::vector<spec_entry> entries; // x's batch dims and rows, then y's columns
  for (std::size_t d = 0; d + 1 < x_rank; ++d)
    entries.push_back(entry_at(nx->spec(), d));
  spec_entry cols;
  if (ny != nullptr && ny->mesh() == nx->mesh()) {
    cols = entry_at(ny->spec(), y_rank - 1);
    bool taken = false;
    for (auto& a : cols.axes())
      for (auto& e : entries)
        for (auto& b : e.axes())
          taken = taken || a == b;
    if (taken)
      cols = spec_entry{};
  }
  entries.push_back(cols);
  std::vector<std::int64_t> params{reinterpret_cast<std::intptr_t>(y.get()), static_cast<std::int64_t>(x_rank),
                                   static_cast<std::int64_t>(y_rank)};
  return memoized(x, "dot", params, [&]() -> sharding_ptr {
    while (!entries.empty() && entries.back().is_none())
      entries.pop_back();
    return make_named_sharding(nx->mesh(), partition_spec(entries));
  });
}

} // namespace am::detail
