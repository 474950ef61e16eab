#include "devices/cpu/cpu_stages.hpp"

#include "devices/detail/dtype_dispatch.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace am::detail {

namespace {

/// One group of merged input dims: all reduced or all kept.
struct dim_group {
  std::int64_t extent;
  bool reduced;
  std::int64_t in_stride = 0;
  std::int64_t out_stride = 0;
};

/// Sums of integers wrap: they accumulate unsigned.
template <class C, bool integral = std::is_integral_v<C>>
struct accumulator {
  using type = C;
};
template <class C>
struct accumulator<C, true> {
  using type = std::make_unsigned_t<C>;
};

template <class T>
struct reducer {
  using C = compute_t<T>;
  using A = typename accumulator<C>::type;
  opcode op;

  A identity() const {
    if (op == opcode::reduce_sum)
      return A(0);
    bool max = op == opcode::reduce_max;
    if constexpr (std::is_same_v<T, bool>)
      return max ? A(0) : A(1);
    else if constexpr (std::is_floating_point_v<C>)
      return max ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
    else
      return static_cast<A>(max ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max());
  }

  static A load(T x) { return static_cast<A>(static_cast<C>(x)); }

  /// The instruction set's kernels for T, when it has them (float32/float64 in the vector units).
  reduce_run_kernel run_kernel = nullptr;
  reduce_into_kernel into_kernel = nullptr;

  /// Combines the contiguous run x[0..n) into `acc`.
  A run(A acc, const T* x, std::int64_t n) const {
    if constexpr (std::is_same_v<A, T>) {
      if (run_kernel) {
        run_kernel(x, n, &acc);
        return acc;
      }
    }
    if (op == opcode::reduce_sum) {
      constexpr int lanes = 16;
      A part[lanes] = {};
      std::int64_t i = 0;
      for (; i + lanes <= n; i += lanes)
        for (int k = 0; k < lanes; ++k)
          part[k] = static_cast<A>(part[k] + load(x[i + k]));
      for (; i < n; ++i)
        part[0] = static_cast<A>(part[0] + load(x[i]));
      for (int w = lanes / 2; w > 0; w /= 2)
        for (int k = 0; k < w; ++k)
          part[k] = static_cast<A>(part[k] + part[k + w]);
      return static_cast<A>(acc + part[0]);
    }
    for (std::int64_t i = 0; i < n; ++i)
      acc = combine(acc, load(x[i]));
    return acc;
  }

  A combine(A acc, A v) const {
    if (op == opcode::reduce_sum)
      return static_cast<A>(acc + v);
    if constexpr (std::is_integral_v<C>) {
      C a = static_cast<C>(acc), b = static_cast<C>(v);
      return static_cast<A>(op == opcode::reduce_max ? std::max(a, b) : std::min(a, b));
    } else if (op == opcode::reduce_max) {
      return (acc >= v || acc != acc) ? acc : v;
    } else {
      return (acc <= v || acc != acc) ? acc : v;
    }
  }

  /// Walks group `g` and deeper, reading from x and accumulating into acc.
  void walk(const std::vector<dim_group>& groups, std::size_t g, const T* x, A* acc) const {
    auto& grp = groups[g];
    if (g + 1 == groups.size()) {
      if (grp.reduced) {
        *acc = run(*acc, x, grp.extent);
      } else {
        if constexpr (std::is_same_v<A, T>) {
          if (into_kernel) {
            into_kernel(x, 1, 0, grp.extent, acc);
            return;
          }
        }
        for (std::int64_t j = 0; j < grp.extent; ++j)
          acc[j] = combine(acc[j], load(x[j]));
      }
      return;
    }
    if constexpr (std::is_same_v<A, T>) {
      if (into_kernel && grp.reduced && g + 2 == groups.size()) { // reduced rows into the kept leaf
        into_kernel(x, grp.extent, grp.in_stride, groups[g + 1].extent, acc);
        return;
      }
    }
    for (std::int64_t j = 0; j < grp.extent; ++j)
      walk(groups, g + 1, x + j * grp.in_stride, acc + j * grp.out_stride);
  }
};

template <class T>
void reduce_typed(opcode op, const buffer& in, buffer& out, const std::vector<std::int64_t>& axes, cpu_isa isa) {
  reducer<T> r{op};
  auto& table = kernels(isa);
  r.run_kernel = table.reduce_run[reduce_slot(op)][static_cast<int>(in.dtype())];
  r.into_kernel = table.reduce_into[reduce_slot(op)][static_cast<int>(in.dtype())];
  using A = typename reducer<T>::A;
  std::vector<dim_group> groups;
  auto& shape = in.shape();
  for (std::size_t d = 0; d < shape.size(); ++d) {
    bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(d));
    if (shape[d] == 1)
      continue;
    if (!groups.empty() && groups.back().reduced == reduced)
      groups.back().extent *= shape[d];
    else
      groups.push_back({shape[d], reduced});
  }
  auto out_n = out.size();
  std::vector<A> acc(static_cast<std::size_t>(out_n), r.identity());
  if (in.size() > 0 && !groups.empty()) {
    std::int64_t in_stride = 1, out_stride = 1;
    for (auto g = groups.rbegin(); g != groups.rend(); ++g) {
      g->in_stride = in_stride;
      g->out_stride = g->reduced ? 0 : out_stride;
      in_stride *= g->extent;
      if (!g->reduced)
        out_stride *= g->extent;
    }
    r.walk(groups, 0, static_cast<const T*>(const_cast<buffer&>(in).data()), acc.data());
  } else if (in.size() > 0) { // every dim has extent 1: one element
    acc[0] = r.combine(acc[0], reducer<T>::load(static_cast<const T*>(const_cast<buffer&>(in).data())[0]));
  }
  auto* dst = static_cast<T*>(out.data());
  for (std::int64_t i = 0; i < out_n; ++i)
    dst[i] = convert_element<T>(static_cast<typename reducer<T>::C>(acc[static_cast<std::size_t>(i)]));
}

} // namespace

void reduce(opcode op, const buffer& in, buffer& out, const std::vector<std::int64_t>& axes, cpu_isa isa) {
  detail::visit_dtype(in.dtype(), [&](auto tag) { reduce_typed<typename decltype(tag)::type>(op, in, out, axes, isa); });
}

void concatenate(const std::vector<const buffer*>& ins, buffer& out, std::int64_t axis) {
  auto& shape = out.shape();
  auto a = static_cast<std::size_t>(axis);
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < a; ++d)
    outer *= shape[d];
  for (std::size_t d = a + 1; d < shape.size(); ++d)
    inner *= shape[d];
  auto esize = static_cast<std::int64_t>(size_of(out.dtype()));
  auto row_bytes = shape[a] * inner * esize;
  auto* dst = static_cast<unsigned char*>(out.data());
  std::int64_t at = 0;
  for (auto* in : ins) {
    auto chunk = in->shape()[a] * inner * esize;
    auto* src = static_cast<const unsigned char*>(const_cast<buffer*>(in)->data());
    for (std::int64_t o = 0; chunk > 0 && o < outer; ++o)
      std::memcpy(dst + o * row_bytes + at, src + o * chunk, static_cast<std::size_t>(chunk));
    at += chunk;
  }
}

} // namespace am::detail
