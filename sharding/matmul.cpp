// jnp.matmul and jnp.dot over the graph's 2-D dot and batched dot nodes (sharding/shape_ops.hpp).
#include "actormesh/sharding/shape_ops.hpp"

#include "actormesh/actors/dtype_promotion.hpp"
#include "actormesh/actors/errors.hpp"
#include "sharding/detail/elementwise.hpp"
#include "actormesh/sharding/detail/graph.hpp"
#include "sharding/detail/sharding_rules.hpp"
#include "actormesh/sharding/detail/trace.hpp"
#include "actormesh/sharding/ops.hpp"

#include <numeric>
#include <string>

namespace am {

namespace {

std::string dims_text(const shape_t& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i)
    out += std::to_string(s[i]) + (s.size() == 1 || i + 1 < s.size() ? "," : "");
  if (s.size() > 1)
    out.pop_back();
  return out + ")";
}

std::string type_text(const array& a) {
  std::string out = std::string(name(a.dtype())) + "[";
  for (std::size_t i = 0; i < a.shape().size(); ++i)
    out += (i ? "," : "") + std::to_string(a.shape()[i]);
  return out + "]";
}

void check_contracting(std::int64_t kx, std::int64_t ky) {
  if (kx != ky)
    throw type_error("dot_general requires contracting dimensions to have the same shape, got " + dims_text({kx})
                     + " and " + dims_text({ky}) + ".");
}

/// The 2-D product node.
array dot2(const array& x, const array& y) {
  auto t = dot_dtype(x.dtype(), y.dtype());
  detail::node n;
  n.kind = detail::node_kind::dot;
  n.shape = {x.shape()[0], y.shape()[1]};
  n.type = t;
  n.layout = detail::dot_result(x.sharding(), y.sharding());
  n.layout->check_compatible(n.shape);
  return detail::apply(std::move(n), {detail::convert(x, t), detail::convert(y, t)});
}

/// The batched product node: x [B,m,k] with y [B,k,n] or a shared [k,n].
array dot3(const array& x, const array& y) {
  auto t = dot_dtype(x.dtype(), y.dtype());
  detail::node n;
  n.kind = detail::node_kind::batch_dot;
  n.shape = {x.shape()[0], x.shape()[1], y.shape().back()};
  n.type = t;
  n.layout = detail::dot_result(x.sharding(), 3, y.sharding(), y.ndim());
  n.layout->check_compatible(n.shape);
  return detail::apply(std::move(n), {detail::convert(x, t), detail::convert(y, t)});
}

std::int64_t product(const shape_t& s, std::size_t from, std::size_t to) {
  return std::accumulate(s.begin() + static_cast<std::ptrdiff_t>(from), s.begin() + static_cast<std::ptrdiff_t>(to),
                         std::int64_t{1}, std::multiplies<>());
}

/// `a` broadcast to `batch` + its last two dims (a no-op when it has them already).
array with_batch(const array& a, const shape_t& batch) {
  shape_t full = batch;
  full.push_back(a.shape()[a.shape().size() - 2]);
  full.push_back(a.shape().back());
  return detail::broadcast_to(a, full, detail::replicated_like(a.sharding()));
}

} // namespace

array matmul(const array& x, const array& y) {
  for (int i = 0; i < 2; ++i)
    if ((i == 0 ? x : y).ndim() == 0)
      throw value_error("matmul input operand " + std::to_string(i) + " must have ndim at least 1, but it has ndim 0");
  auto xm = x.ndim() == 1 ? reshape(x, {1, x.shape()[0]}) : x;
  auto ym = y.ndim() == 1 ? reshape(y, {y.shape()[0], 1}) : y;
  auto xs = xm.shape(), ys = ym.shape();
  check_contracting(xs.back(), ys[ys.size() - 2]);
  array out;
  if (xs.size() == 2 && ys.size() == 2) {
    out = dot2(xm, ym);
  } else {
    // numpy's broadcast of the batch dims (all but the last two).
    shape_t bx(xs.begin(), xs.end() - 2), by(ys.begin(), ys.end() - 2);
    auto rank = std::max(bx.size(), by.size());
    shape_t batch(rank, 1);
    for (std::size_t d = 0; d < rank; ++d) {
      auto ex = d + bx.size() >= rank ? bx[d + bx.size() - rank] : 1;
      auto ey = d + by.size() >= rank ? by[d + by.size() - rank] : 1;
      if (ex != ey && ex != 1 && ey != 1)
        throw value_error("Incompatible types for matmul arguments: " + type_text(x) + " and " + type_text(y));
      batch[d] = ex == 1 ? ey : ex;
    }
    auto b = product(batch, 0, batch.size());
    auto m = xs[xs.size() - 2], k = xs.back(), n = ys.back();
    auto x3 = xs.size() == 3 && bx == batch ? xm : reshape(with_batch(xm, batch), {b, m, k});
    auto y3 = by.empty() ? ym : (ys.size() == 3 && by == batch ? ym : reshape(with_batch(ym, batch), {b, k, n}));
    out = dot3(x3, y3);
    if (batch.size() != 1) {
      shape_t full = batch;
      full.push_back(m);
      full.push_back(n);
      out = reshape(out, full);
    }
  }
  if (x.ndim() == 1 || y.ndim() == 1) {
    auto s = out.shape();
    if (y.ndim() == 1)
      s.pop_back();
    if (x.ndim() == 1)
      s.erase(s.end() - (y.ndim() == 1 ? 1 : 2));
    out = reshape(out, s);
  }
  return out;
}

array dot(const array& x, const array& y) {
  if (x.ndim() == 0 || y.ndim() == 0)
    return multiply(x, y);
  if (y.ndim() <= 2)
    return x.ndim() <= 2 ? matmul(x, y) : [&] {
      // [..., k] . [k, n]: the leading dims of x as rows.
      auto xs = x.shape();
      check_contracting(xs.back(), y.shape()[0]);
      auto rows = reshape(x, {product(xs, 0, xs.size() - 1), xs.back()});
      auto r = matmul(rows, y);
      shape_t s(xs.begin(), xs.end() - 1);
      if (y.ndim() == 2)
        s.push_back(y.shape()[1]);
      return reshape(r, s);
    }();
  // y [..., k, n] with batch dims: move k to the front, [k, (batch..., n)], one 2-D product.
  auto ys = y.shape();
  auto r = static_cast<std::int64_t>(ys.size());
  check_contracting(x.shape().back(), ys[ys.size() - 2]);
  std::vector<std::int64_t> perm{r - 2};
  for (std::int64_t d = 0; d < r; ++d)
    if (d != r - 2)
      perm.push_back(d);
  auto k = ys[ys.size() - 2];
  auto rest = product(ys, 0, ys.size() - 2) * ys.back();
  auto y2 = reshape(transpose(y, perm), {k, rest});
  auto x2 = x.ndim() == 1 ? reshape(x, {1, k}) : reshape(x, {product(x.shape(), 0, x.shape().size() - 1), k});
  auto p = matmul(x2, y2);
  shape_t s(x.shape().begin(), x.shape().end() - 1);
  for (std::size_t d = 0; d < ys.size(); ++d)
    if (d != ys.size() - 2)
      s.push_back(ys[d]);
  return reshape(p, s);
}

} // namespace am
