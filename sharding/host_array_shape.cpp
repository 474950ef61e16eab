/// host_array's shape operations: reshape, transpose, slice, broadcasting.
#include <cstring>

#include "sharding/detail/host_array_util.hpp"
#include "actormesh/sharding/host_array.hpp"

namespace am {

namespace {

using shape_type = host_array::shape_type;

// Copies elements of `src` into the contiguous `out`: output element (i0, i1, ...) is read at element
// offset `offset + sum(i_d * strides[d])` of src (strides in elements; 0 repeats, negative walks back).
void gather(const host_array& src, host_array& out, std::int64_t offset, const std::vector<std::int64_t>& strides) {
  if (out.size() == 0) return;
  const auto elem = static_cast<std::int64_t>(size_of(src.dtype()));
  const std::byte* in = src.bytes().data();
  std::byte* dst = out.bytes().data();
  const shape_type& shape = out.shape();
  const std::size_t rank = shape.size();
  if (rank == 0) {
    std::memcpy(dst, in + offset * elem, static_cast<std::size_t>(elem));
    return;
  }
  const std::int64_t inner = shape[rank - 1];
  const std::int64_t inner_stride = strides[rank - 1];
  std::vector<std::int64_t> index(rank, 0);
  std::int64_t base = offset;  // src offset of (index[0..rank-2], 0)
  const std::int64_t rows = out.size() / inner;
  for (std::int64_t r = 0; r < rows; ++r) {
    if (inner_stride == 1) {
      std::memcpy(dst, in + base * elem, static_cast<std::size_t>(inner * elem));
      dst += inner * elem;
    } else {
      for (std::int64_t i = 0; i < inner; ++i, dst += elem)
        std::memcpy(dst, in + (base + i * inner_stride) * elem, static_cast<std::size_t>(elem));
    }
    for (std::size_t d = rank - 1; d-- > 0;) {  // advance the odometer over the outer dimensions
      base += strides[d];
      if (++index[d] < shape[d]) break;
      base -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

// Row-major strides (in elements) of a contiguous array of this shape.
std::vector<std::int64_t> contiguous_strides(const shape_type& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

} // namespace

host_array host_array::reshape(shape_type shape) const {
  std::optional<std::int64_t> known = 1;  // product of the given extents; nothing past int64
  std::size_t unknown = shape.size();
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0) {
      if (unknown != shape.size()) throw value_error("can only specify one unknown dimension");
      unknown = d;
    } else if (known) {
      known = checked_mul(*known, shape[d]);
    }
  }
  const auto mismatch = [&] {
    return value_error("cannot reshape array of size " + std::to_string(size_) + " into shape " +
                       detail::numpy_shape_text(shape));
  };
  if (unknown != shape.size()) {
    if (!known || *known == 0 || size_ % *known != 0) throw mismatch();
    shape[unknown] = size_ / *known;
  } else if (known != size_) {
    throw mismatch();
  }
  return host_array(dtype_, std::move(shape), data_);
}

host_array host_array::transpose() const {
  std::vector<std::int64_t> axes(shape_.size());
  for (std::size_t d = 0; d < axes.size(); ++d) axes[d] = static_cast<std::int64_t>(axes.size() - 1 - d);
  return transpose(axes);
}

host_array host_array::transpose(const std::vector<std::int64_t>& axes) const {
  if (axes.size() != shape_.size()) throw value_error("axes don't match array");
  const std::vector<std::int64_t> src_strides = contiguous_strides(shape_);
  std::vector<bool> seen(shape_.size(), false);
  shape_type out_shape(axes.size());
  std::vector<std::int64_t> strides(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const auto a = static_cast<std::size_t>(detail::normalize_axis(axes[i], ndim()));
    if (seen[a]) throw value_error("repeated axis in transpose");
    seen[a] = true;
    out_shape[i] = shape_[a];
    strides[i] = src_strides[a];
  }
  host_array out = empty(std::move(out_shape), dtype_);
  gather(*this, out, 0, strides);
  return out;
}

host_array host_array::slice(const std::vector<slice_spec>& slices) const {
  if (slices.size() > shape_.size()) detail::throw_too_many_indices(shape_.size(), slices.size());
  const std::vector<std::int64_t> src_strides = contiguous_strides(shape_);
  shape_type out_shape = shape_;
  std::vector<std::int64_t> strides = src_strides;
  std::int64_t offset = 0;
  for (std::size_t d = 0; d < slices.size(); ++d) {
    // Python's slice.indices / PySlice_AdjustIndices.
    const std::int64_t n = shape_[d];
    const std::int64_t step = slices[d].step;
    if (step == 0) throw value_error("slice step cannot be zero");
    const auto clamp = [&](std::optional<std::int64_t> v, std::int64_t fallback) {
      if (!v) return fallback;
      std::int64_t k = *v < 0 ? *v + n : *v;
      if (k < 0) k = step < 0 ? -1 : 0;
      if (k >= n) k = step < 0 ? n - 1 : n;
      return k;
    };
    const std::int64_t start = clamp(slices[d].start, step < 0 ? n - 1 : 0);
    const std::int64_t stop = clamp(slices[d].stop, step < 0 ? -1 : n);
    std::int64_t length = 0;
    if (step > 0 && stop > start) length = (stop - start - 1) / step + 1;
    if (step < 0 && start > stop) length = (start - stop - 1) / (-step) + 1;
    out_shape[d] = length;
    strides[d] = src_strides[d] * step;
    if (length > 0) offset += start * src_strides[d];
  }
  host_array out = empty(std::move(out_shape), dtype_);
  gather(*this, out, offset, strides);
  return out;
}

host_array host_array::broadcast_to(const shape_type& shape) const {
  for (const std::int64_t d : shape)
    if (d < 0) throw value_error("all elements of broadcast shape must be non-negative");
  if (shape_.size() > shape.size())
    throw value_error("input operand has more dimensions than allowed by the axis remapping");
  const std::size_t lead = shape.size() - shape_.size();
  const std::vector<std::int64_t> src_strides = contiguous_strides(shape_);
  std::vector<std::int64_t> strides(shape.size(), 0);
  for (std::size_t d = 0; d < shape_.size(); ++d) {
    if (shape_[d] == shape[lead + d]) {
      strides[lead + d] = src_strides[d];
    } else if (shape_[d] != 1) {
      throw value_error("operands could not be broadcast together with remapped shapes [original->remapped]: " +
                        detail::numpy_shape_text(shape_) + "  and requested shape " + detail::numpy_shape_text(shape));
    }
  }
  host_array out = empty(shape, dtype_);
  gather(*this, out, 0, strides);
  return out;
}

host_array::shape_type host_array::broadcast_shapes(const shape_type& a, const shape_type& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  shape_type out(rank);
  for (std::size_t i = 0; i < rank; ++i) {  // i counts from the last dimension
    const std::int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    const std::int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1)
      throw value_error("operands could not be broadcast together with shapes " + detail::numpy_shape_text(a) + " " +
                        detail::numpy_shape_text(b) + " ");
    out[rank - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

} // namespace am
