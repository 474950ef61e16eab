#include "devices/cpu/cpu_sources.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/detail/dtype_dispatch.hpp"

#include <bit>
#include <cstring>
#include <string>
#include <type_traits>

namespace am::detail {

namespace {

#include "devices/cpu/cpu_unravel.inc"

template <class T>
void fill_kernel(const tile_call& c) {
  T v;
  std::memcpy(&v, static_cast<const constant_params*>(c.params)->bytes, sizeof(T));
  auto* d = static_cast<T*>(c.dst);
  for (std::int64_t i = 0; i < c.n; ++i)
    d[i] = v;
}

template <class T>
void iota_kernel_impl(const tile_call& c) {
  auto* d = static_cast<T*>(c.dst);
  for (std::int64_t i = 0; i < c.n; ++i)
    d[i] = convert_element<T>(c.begin + i);
}

template <class W>
void gather_impl(const tile_call& c) {
  auto& p = *static_cast<const gather_params*>(c.params);
  auto* src = static_cast<const W*>(c.src[0]);
  auto* dst = static_cast<W*>(c.dst);
  auto r = static_cast<int>(p.shape.size());
  std::int64_t idx[max_rank];
  unravel(c.begin, p.shape, idx);
  std::int64_t pos = p.offset;
  for (int d = 0; d < r; ++d)
    pos += idx[d] * p.strides[static_cast<std::size_t>(d)];
  const std::int64_t inner = p.shape.back(), s = p.strides.back();
  for (std::int64_t done = 0; done < c.n;) {
    std::int64_t run = std::min(inner - idx[r - 1], c.n - done);
    if (s == 0) {
      W v = src[pos];
      for (std::int64_t k = 0; k < run; ++k)
        dst[done + k] = v;
    } else if (s == 1) {
      std::memcpy(dst + done, src + pos, static_cast<std::size_t>(run) * sizeof(W));
    } else {
      for (std::int64_t k = 0; k < run; ++k)
        dst[done + k] = src[pos + k * s];
    }
    done += run;
    idx[r - 1] += run;
    pos += run * s;
    for (int d = r - 1; d > 0 && idx[d] == p.shape[static_cast<std::size_t>(d)]; --d) {
      pos -= idx[d] * p.strides[static_cast<std::size_t>(d)];
      idx[d] = 0;
      ++idx[d - 1];
      pos += p.strides[static_cast<std::size_t>(d - 1)];
    }
  }
}

/// Drops size-1 dims and merges dims that walk the operand contiguously.
gather_params simplify(gather_params p) {
  gather_params out;
  out.offset = p.offset;
  for (std::size_t d = 0; d < p.shape.size(); ++d) {
    if (p.shape[d] == 1)
      continue;
    if (!out.shape.empty() && out.strides.back() == p.strides[d] * p.shape[d]) {
      out.shape.back() *= p.shape[d];
      out.strides.back() = p.strides[d];
      continue;
    }
    out.shape.push_back(p.shape[d]);
    out.strides.push_back(p.strides[d]);
  }
  if (out.shape.empty()) {
    out.shape.push_back(1);
    out.strides.push_back(0);
  }
  if (out.shape.size() > static_cast<std::size_t>(max_rank))
    throw value_error("arrays of more than 32 dimensions are not supported on CPU devices");
  return out;
}

} // namespace

std::vector<std::int64_t> row_major_strides(const shape_t& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (auto d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
    strides[static_cast<std::size_t>(d)] = strides[static_cast<std::size_t>(d) + 1] * shape[static_cast<std::size_t>(d) + 1];
  return strides;
}

constant_params make_constant(double value, dtype type) {
  constant_params p;
  detail::visit_dtype(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v = convert_element<T>(value);
    std::memcpy(p.bytes, &v, sizeof(T));
  });
  return p;
}

tile_kernel constant_kernel(dtype type) {
  switch (size_of(type)) {
    case 1: return fill_kernel<std::uint8_t>;
    case 2: return fill_kernel<std::uint16_t>;
    case 4: return fill_kernel<std::uint32_t>;
    default: return fill_kernel<std::uint64_t>;
  }
}

tile_kernel iota_kernel(dtype type) {
  return detail::visit_dtype(type, [](auto tag) -> tile_kernel {
    return iota_kernel_impl<typename decltype(tag)::type>;
  });
}

tile_kernel gather_kernel(dtype type) {
  switch (size_of(type)) {
    case 1: return gather_impl<std::uint8_t>;
    case 2: return gather_impl<std::uint16_t>;
    case 4: return gather_impl<std::uint32_t>;
    default: return gather_impl<std::uint64_t>;
  }
}

gather_params broadcast_gather(const shape_t& operand, const shape_t& result,
                               const std::vector<std::int64_t>& dims) {
  gather_params p;
  p.shape = result;
  p.strides.assign(result.size(), 0);
  auto in_strides = row_major_strides(operand);
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (operand[i] != 1)
      p.strides[static_cast<std::size_t>(dims[i])] = in_strides[i];
  return simplify(std::move(p));
}

gather_params slice_gather(const shape_t& operand, const std::vector<std::int64_t>& attrs) {
  gather_params p;
  auto r = operand.size();
  p.strides = row_major_strides(operand);
  for (std::size_t d = 0; d < r; ++d) {
    p.shape.push_back(attrs[r + d] - attrs[d]);
    p.offset += attrs[d] * p.strides[d];
  }
  return simplify(std::move(p));
}

gather_params transpose_gather(const shape_t& operand, const std::vector<std::int64_t>& permutation) {
  gather_params p;
  auto in_strides = row_major_strides(operand);
  for (auto d : permutation) {
    p.shape.push_back(operand[static_cast<std::size_t>(d)]);
    p.strides.push_back(in_strides[static_cast<std::size_t>(d)]);
  }
  return simplify(std::move(p));
}

random_params make_random(const std::vector<std::int64_t>& attrs, const shape_t& shape) {
  random_params p;
  p.key = static_cast<std::uint64_t>(attrs[0]);
  auto r = static_cast<std::size_t>(attrs[1]);
  shape_t global(attrs.begin() + 2, attrs.begin() + 2 + static_cast<std::ptrdiff_t>(r));
  p.offsets.assign(attrs.begin() + 2 + static_cast<std::ptrdiff_t>(r), attrs.begin() + 2 + 2 * static_cast<std::ptrdiff_t>(r));
  if (attrs.size() == 4 + 2 * r) {
    p.ranged = true;
    p.low = std::bit_cast<double>(attrs[2 + 2 * r]);
    p.span = std::bit_cast<double>(attrs[3 + 2 * r]);
  }
  p.global_strides = row_major_strides(global);
  p.shape = shape;
  if (r > static_cast<std::size_t>(max_rank))
    throw value_error("arrays of more than 32 dimensions are not supported on CPU devices");
  return p;
}

} // namespace am::detail
