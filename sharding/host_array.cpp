/// host_array: storage, creation, element access, conversion and comparison helpers.
/// (Shape operations are in host_array_shape.cpp, printing in host_array_print.cpp.)
#include "actormesh/sharding/host_array.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>

#include <sys/sysinfo.h>

#include "sharding/detail/host_array_util.hpp"

namespace am {

namespace {

constexpr std::align_val_t alignment{64};

// The most memory the host can ever give one process: physical memory plus swap (sysinfo).
std::size_t host_memory_bytes() {
  static const std::size_t bytes = [] {
    struct sysinfo info {};
    if (sysinfo(&info) != 0)
      return std::numeric_limits<std::size_t>::max();
    const auto unit = static_cast<unsigned __int128>(info.mem_unit);
    const auto total = (static_cast<unsigned __int128>(info.totalram) + info.totalswap) * unit;
    return static_cast<std::size_t>(std::min<unsigned __int128>(total, std::numeric_limits<std::size_t>::max()));
  }();
  return bytes;
}

template <class To, class From>
void convert_loop(To* dst, const From* src, std::int64_t count, bool repeat_source) {
  if (repeat_source) {
    const To v = convert_element<To>(*src);
    std::fill(dst, dst + count, v);
  } else {
    for (std::int64_t i = 0; i < count; ++i) dst[i] = convert_element<To>(src[i]);
  }
}

} // namespace

host_array::host_array() : host_array(allocate_array(am::dtype::float64, {0})) {}

host_array::host_array(am::dtype type, shape_type shape, std::shared_ptr<std::byte> data)
    : dtype_(type), shape_(std::move(shape)), size_(element_count(shape_)), data_(std::move(data)) {}

std::shared_ptr<std::byte> host_array::allocate(std::size_t bytes) {
  // With overcommit a request larger than the machine can "succeed" and kill the process when its
  // pages are touched, so what can never fit is refused before asking.
  if (bytes > host_memory_bytes())
    throw resource_exhausted(bytes, "the host");
  try {
    auto* p = static_cast<std::byte*>(::operator new(std::max<std::size_t>(bytes, 1), alignment));
    return {p, [](std::byte* q) { ::operator delete(q, alignment); }};
  } catch (const std::bad_alloc&) {
    throw resource_exhausted(bytes, "the host");
  }
}

host_array host_array::allocate_array(am::dtype type, shape_type shape) {
  const auto bytes = static_cast<std::size_t>(byte_size(shape, type));
  return host_array(type, std::move(shape), allocate(bytes));
}

void host_array::fill_converted(std::byte* dst, am::dtype dst_type, const void* src, am::dtype src_type,
                                std::int64_t count, bool repeat_source) {
  if (dst_type == src_type && !repeat_source) {
    if (count > 0) std::memmove(dst, src, static_cast<std::size_t>(count) * size_of(dst_type));
    return;
  }
  visit_dtype(dst_type, [&]<class To>(std::type_identity<To>) {
    visit_dtype(src_type, [&]<class From>(std::type_identity<From>) {
      if constexpr (std::is_same_v<From, bool>) {
        // Bool bytes are read as bytes (any nonzero is true), so bytes from outside cannot be invalid bools.
        const auto* bytes = static_cast<const std::uint8_t*>(src);
        To* out = reinterpret_cast<To*>(dst);
        for (std::int64_t i = 0; i < count; ++i) out[i] = convert_element<To>(bytes[repeat_source ? 0 : i] != 0);
      } else {
        convert_loop(reinterpret_cast<To*>(dst), static_cast<const From*>(src), count, repeat_source);
      }
    });
  });
}

void host_array::check_element_type(am::dtype wanted) const {
  if (wanted != dtype_)
    throw type_error("host_array holds " + std::string(name(dtype_)) + " elements, not " +
                     std::string(name(wanted)));
}

std::int64_t host_array::flat_index(std::span<const std::int64_t> index) const {
  if (index.size() > shape_.size()) detail::throw_too_many_indices(shape_.size(), index.size());
  if (index.size() < shape_.size())
    throw value_error("an element index needs " + std::to_string(shape_.size()) + " indices for a " +
                      std::to_string(shape_.size()) + "-dimensional array, but " + std::to_string(index.size()) +
                      " were given");
  std::int64_t flat = 0;
  for (std::size_t d = 0; d < shape_.size(); ++d)
    flat = flat * shape_[d] + detail::normalize_index(index[d], static_cast<std::int64_t>(d), shape_[d]);
  return flat;
}

bool host_array::shares_memory_with(const host_array& other) const noexcept {
  if (nbytes() == 0 || other.nbytes() == 0) return false;
  return !data_.owner_before(other.data_) && !other.data_.owner_before(data_);
}

// ---- creation ----------------------------------------------------------------------------------------

host_array host_array::empty(shape_type shape, am::dtype type) { return allocate_array(type, std::move(shape)); }

host_array host_array::zeros(shape_type shape, am::dtype type) {
  host_array out = allocate_array(type, std::move(shape));
  if (out.nbytes() > 0) std::memset(out.data_.get(), 0, out.nbytes());  // zero bits are zero in every dtype
  return out;
}

host_array host_array::ones(shape_type shape, am::dtype type) { return full(std::move(shape), true, type); }

host_array host_array::arange(std::int64_t stop, am::dtype type) {
  return arange(0.0, static_cast<double>(stop), 1.0, type);
}

host_array host_array::arange(double start, double stop, double step, am::dtype type) {
  if (step == 0.0) throw value_error("division by zero");
  const double delta = stop - start;
  const double ratio = delta / step;
  std::int64_t length = 0;
  if (ratio == 0.0 && delta != 0.0) {
    length = std::signbit(ratio) ? 0 : 1;  // underflow
  } else {
    if (std::isnan(ratio)) throw value_error("arange: cannot compute length");
    const double c = std::ceil(ratio);
    if (c >= 9.2e18) throw value_error("Maximum allowed size exceeded");
    length = c > 0 ? static_cast<std::int64_t>(c) : 0;
  }
  if (type == am::dtype::bool_ && length > 2)
    throw type_error("arange() is only supported for booleans when the result has at most length 2.");
  host_array out = allocate_array(type, {length});
  // numpy stores the first two values converted from double, then fills the rest as
  // first + i * (second - first), computed in the dtype (float for the 16-bit floats).
  visit_dtype(type, [&]<class T>(std::type_identity<T>) {
    T* p = reinterpret_cast<T*>(out.data_.get());
    if (length > 0) p[0] = convert_element<T>(start);
    if (length > 1) p[1] = convert_element<T>(start + step);
    if (length <= 2) return;
    if constexpr (std::is_same_v<T, bool>) {
      return;
    } else if constexpr (std::is_integral_v<T>) {
      const auto first = static_cast<std::int64_t>(p[0]);
      const auto d = static_cast<std::int64_t>(p[1]) - first;
      for (std::int64_t i = 2; i < length; ++i)
        p[i] = static_cast<T>(static_cast<std::uint64_t>(first) + static_cast<std::uint64_t>(i * d));
    } else {
      using compute = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const auto first = static_cast<compute>(p[0]);
      const compute d = static_cast<compute>(p[1]) - first;
      for (std::int64_t i = 2; i < length; ++i) p[i] = T(first + static_cast<compute>(i) * d);
    }
  });
  return out;
}

host_array host_array::from_shared_bytes(std::shared_ptr<std::byte> bytes, std::size_t size_bytes, am::dtype type,
                                         shape_type shape) {
  const auto need = static_cast<std::size_t>(byte_size(shape, type));
  if (size_bytes < need)
    throw value_error("buffer of " + std::to_string(size_bytes) + " bytes is too small for an array of shape " +
                      shape_to_string(shape) + " and dtype " + std::string(name(type)) + " (" +
                      std::to_string(need) + " bytes)");
  if (!bytes && need > 0) throw value_error("null buffer for a non-empty array");
  if (!bytes) bytes = allocate(0);
  return host_array(type, std::move(shape), std::move(bytes));
}

host_array host_array::from_bytes(std::span<const std::byte> bytes, am::dtype type, shape_type shape) {
  host_array out = allocate_array(type, std::move(shape));
  if (bytes.size() != out.nbytes())
    throw value_error("buffer size " + std::to_string(bytes.size()) + " must match the array's " +
                      std::to_string(out.nbytes()) + " bytes");
  if (!bytes.empty()) std::memcpy(out.data_.get(), bytes.data(), bytes.size());
  return out;
}

// ---- access and conversion ---------------------------------------------------------------------------

host_array host_array::operator[](std::int64_t i) const {
  if (shape_.empty()) detail::throw_too_many_indices(0, 1);
  const std::int64_t k = detail::normalize_index(i, 0, shape_[0]);
  shape_type rest(shape_.begin() + 1, shape_.end());
  const std::int64_t inner = element_count(rest);
  // The aliasing constructor shares ownership of the whole buffer while pointing into it.
  std::shared_ptr<std::byte> sub(data_, data_.get() + k * inner * static_cast<std::int64_t>(size_of(dtype_)));
  return host_array(dtype_, std::move(rest), std::move(sub));
}

host_array host_array::copy() const {
  host_array out = allocate_array(dtype_, shape_);
  if (nbytes() > 0) std::memcpy(out.data_.get(), data_.get(), nbytes());
  return out;
}

host_array host_array::astype(am::dtype type) const {
  host_array out = allocate_array(type, shape_);
  fill_converted(out.data_.get(), type, data_.get(), dtype_, size_);
  return out;
}

// ---- comparison helpers --------------------------------------------------------------------------------

bool array_equal(const host_array& a, const host_array& b, bool equal_nan) {
  if (a.shape() != b.shape()) return false;
  const bool integral = !is_floating(a.dtype()) && !is_floating(b.dtype());
  if (integral) return a.to_vector<std::int64_t>() == b.to_vector<std::int64_t>();
  const std::vector<double> x = a.to_vector<double>();
  const std::vector<double> y = b.to_vector<double>();
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] == y[i]) continue;
    if (equal_nan && std::isnan(x[i]) && std::isnan(y[i])) continue;
    return false;
  }
  return true;
}

bool array_identical(const host_array& a, const host_array& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  return a.nbytes() == 0 || std::memcmp(a.bytes().data(), b.bytes().data(), a.nbytes()) == 0;
}

bool allclose(const host_array& a, const host_array& b, double rtol, double atol, bool equal_nan) {
  const host_array::shape_type shape = host_array::broadcast_shapes(a.shape(), b.shape());
  const std::vector<double> x = a.broadcast_to(shape).to_vector<double>();
  const std::vector<double> y = b.broadcast_to(shape).to_vector<double>();
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) || std::isnan(y[i])) {
      if (equal_nan && std::isnan(x[i]) && std::isnan(y[i])) continue;
      return false;
    }
    if (std::isinf(x[i]) || std::isinf(y[i])) {
      if (x[i] == y[i]) continue;
      return false;
    }
    if (!(std::abs(x[i] - y[i]) <= atol + rtol * std::abs(y[i]))) return false;
  }
  return true;
}

} // namespace am
