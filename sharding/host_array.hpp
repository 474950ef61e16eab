/// The host n-d array: how data goes into the runtime and comes back out (device_put, to_host), with
/// numpy's semantics for creation, indexing, reshaping, broadcasting and casting.
#ifndef ACTORMESH_SHARDING_HOST_ARRAY_HPP
#define ACTORMESH_SHARDING_HOST_ARRAY_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "actormesh/actors/dtype.hpp"
#include "actormesh/actors/dtype_promotion.hpp"
#include "actormesh/actors/errors.hpp"
#include "actormesh/actors/float16.hpp"
#include "actormesh/actors/shape.hpp"

namespace am {

/// An n-d array in host memory: a shape, a dtype and contiguous row-major bytes.
///
/// The bytes are held by shared ownership: copying a host_array is cheap and the copies share (and see
/// each other's writes, like numpy views); `copy()` makes an independent deep copy. reshape and
/// `operator[]` also share; slice, transpose, broadcast_to and astype return new arrays. Errors use
/// numpy's wording; numpy's IndexError and AxisError are raised as value_error.
class host_array {
public:
  /// A shape: one non-negative extent per dimension (rank 0 = a scalar).
  using shape_type = std::vector<std::int64_t>;

  /// One dimension of a slice, as Python's `start:stop:step` (absent start/stop = the whole range in
  /// the step's direction; negative indices count from the end).
  struct slice_spec {
    std::optional<std::int64_t> start{};  ///< first index (Python's default when absent)
    std::optional<std::int64_t> stop{};   ///< one past the last index (default when absent)
    std::int64_t step = 1;              ///< stride; nonzero, negative walks backwards
  };

  /// An empty 1-d float64 array (numpy's `np.array([])`).
  host_array();

  // ---- creation ------------------------------------------------------------------------------------

  // Every creation function refuses a negative extent or a size past int64 with am::value_error
  // ("negative dimensions are not allowed", "array is too big; ..."), and memory the host cannot
  // provide with am::out_of_memory_error ("RESOURCE_EXHAUSTED: Out of memory while trying to
  // allocate N bytes on the host"): at once when the request exceeds the machine's physical memory
  // plus swap, else when the allocation itself fails.

  /// An array whose contents are not initialized (numpy's `empty`): for data about to be overwritten
  /// (reading an element before writing it gives an unspecified value).
  static host_array empty(shape_type shape, am::dtype type = am::dtype::float64);
  /// An array of zeros.
  static host_array zeros(shape_type shape, am::dtype type = am::dtype::float64);
  /// An array of ones.
  static host_array ones(shape_type shape, am::dtype type = am::dtype::float64);
  /// An array filled with `value`, of dtype_of<T>() (note: a C++ int gives int32, numpy would give int64).
  template <element_type T>
  static host_array full(shape_type shape, T value) {
    return full(std::move(shape), value, dtype_of<T>());
  }
  /// An array of dtype `type` filled with `value` converted as astype converts.
  template <element_type T>
  static host_array full(shape_type shape, T value, am::dtype type);
  /// Values from `start` to `stop` (exclusive) by `step`, computed as numpy's arange does: length
  /// ceil((stop - start) / step), element i = first + i * (second - first) in the result dtype. A zero
  /// step raises value_error("division by zero"), as numpy raises ZeroDivisionError.
  static host_array arange(double start, double stop, double step, am::dtype type);
  /// 0, 1, ..., stop - 1 (numpy's `arange(stop)`; int64 unless asked otherwise).
  static host_array arange(std::int64_t stop, am::dtype type = am::dtype::int64);
  /// A 1-d array of these values.
  template <element_type T>
  static host_array from_vector(const std::vector<T>& values) {
    return from_vector(values, {static_cast<std::int64_t>(values.size())});
  }
  /// An array of this shape holding these values in row-major order; the sizes must agree
  /// ("cannot reshape array of size 3 into shape (2,2)").
  template <element_type T>
  static host_array from_vector(const std::vector<T>& values, shape_type shape);
  /// A 0-d array (a scalar) holding `value`.
  template <element_type T>
  static host_array scalar(T value) {
    return from_vector(std::vector<T>{value}, {});
  }
  /// An array over existing bytes, without copying: `bytes` (of `size_bytes` bytes, at least the
  /// array's) is shared, kept alive by this array and its copies. This is how device buffers and
  /// messages hand data over without a copy.
  static host_array from_shared_bytes(std::shared_ptr<std::byte> bytes, std::size_t size_bytes, am::dtype type,
                                      shape_type shape);
  /// An array holding a copy of `bytes` (exactly the array's byte size).
  static host_array from_bytes(std::span<const std::byte> bytes, am::dtype type, shape_type shape);

  // ---- properties ----------------------------------------------------------------------------------

  /// The element type.
  am::dtype dtype() const noexcept { return dtype_; }
  /// The shape.
  const shape_type& shape() const noexcept { return shape_; }
  /// The number of dimensions.
  std::int64_t ndim() const noexcept { return static_cast<std::int64_t>(shape_.size()); }
  /// The number of elements (the product of the shape; 1 for a scalar).
  std::int64_t size() const noexcept { return size_; }
  /// The number of bytes of the elements.
  std::size_t nbytes() const noexcept { return static_cast<std::size_t>(size_) * size_of(dtype_); }
  /// The elements' bytes, row-major.
  std::span<std::byte> bytes() const noexcept { return {data_.get(), nbytes()}; }
  /// The owning pointer to the bytes, for handing them on without a copy.
  const std::shared_ptr<std::byte>& shared_bytes() const noexcept { return data_; }
  /// True when both arrays use the same memory (one is a cheap copy, reshape or row of the other).
  bool shares_memory_with(const host_array& other) const noexcept;

  // ---- element access ------------------------------------------------------------------------------

  /// The elements as T, which must be the dtype's element type exactly (else type_error), since the
  /// pointer reads the bytes as they are. Writes through it are seen by every array sharing the bytes.
  template <element_type T>
  T* data() const {
    check_element_type(dtype_of<T>());
    return reinterpret_cast<T*>(data_.get());
  }
  /// The element at this index (one per dimension; negative counts from the end), by reference; T must
  /// be the dtype's element type (else type_error).
  template <element_type T>
  T& at(std::initializer_list<std::int64_t> index) const {
    return data<T>()[flat_index({index.begin(), index.size()})];
  }
  /// The element at this index, by reference (see the initializer-list form).
  template <element_type T>
  T& at(const shape_type& index) const {
    return data<T>()[flat_index(index)];
  }
  /// The element at this index converted to T with astype's rules (any T, any dtype).
  template <element_type T>
  T get(std::initializer_list<std::int64_t> index) const;
  /// Stores `value` at this index, converted to the array's dtype with astype's rules.
  template <element_type T>
  void set(std::initializer_list<std::int64_t> index, T value) const;
  /// The only element of a size-1 array, converted to T (numpy's `item()`; else value_error "can only
  /// convert an array of size 1 to a Python scalar").
  template <element_type T>
  T item() const;
  /// All elements in row-major order converted to T with astype's rules.
  template <element_type T>
  std::vector<T> to_vector() const;
  /// The sub-array at index i of the first dimension (numpy's `a[i]`), sharing memory with this one.
  host_array operator[](std::int64_t i) const;

  // ---- shape and data operations ------------------------------------------------------------------

  /// A deep copy: same shape, dtype and values, in new memory.
  host_array copy() const;
  /// The same elements in another shape, sharing memory; one extent may be -1 (inferred).
  host_array reshape(shape_type shape) const;
  /// The axes reversed (numpy's `a.T`).
  host_array transpose() const;
  /// The axes permuted: result axis i is this array's axis `axes[i]` (negative axes count from the end).
  host_array transpose(const std::vector<std::int64_t>& axes) const;
  /// A slice per dimension (missing trailing dimensions are taken whole), numpy's `a[s0, s1, ...]`
  /// with slices only, as a new array.
  host_array slice(const std::vector<slice_spec>& slices) const;
  /// This array broadcast to `shape` with numpy's rule (numpy's `broadcast_to`), as a new array.
  host_array broadcast_to(const shape_type& shape) const;
  /// The elements converted to `type` with numpy's astype rules (see convert_element), as a new array.
  host_array astype(am::dtype type) const;

  /// The broadcast shape of two shapes (numpy's rule: align at the end, extents equal or 1); else
  /// value_error "operands could not be broadcast together with shapes (2,3) (4,) " (numpy's text,
  /// trailing space included).
  static shape_type broadcast_shapes(const shape_type& a, const shape_type& b);

private:
  host_array(am::dtype type, shape_type shape, std::shared_ptr<std::byte> data);
  void check_element_type(am::dtype wanted) const;
  std::int64_t flat_index(std::span<const std::int64_t> index) const;
  static std::shared_ptr<std::byte> allocate(std::size_t bytes);
  static host_array allocate_array(am::dtype type, shape_type shape);
  static void fill_converted(std::byte* dst, am::dtype dst_type, const void* src, am::dtype src_type,
                             std::int64_t count, bool repeat_source = false);

  am::dtype dtype_ = am::dtype::float64;
  shape_type shape_{0};
  std::int64_t size_ = 0;
  std::shared_ptr<std::byte> data_;
};

/// True when both arrays have the same shape and equal values (numpy's `array_equal`: dtypes may
/// differ, values are compared exactly, NaN differs from NaN unless `equal_nan`).
bool array_equal(const host_array& a, const host_array& b, bool equal_nan = false);

/// True when both arrays have the same dtype and shape and the same bytes (a strict test helper).
bool array_identical(const host_array& a, const host_array& b);

/// numpy's `allclose`: after broadcasting, every |a - b| <= atol + rtol * |b| (infinities must match,
/// NaN matches only with `equal_nan`). Shapes that do not broadcast raise value_error.
bool allclose(const host_array& a, const host_array& b, double rtol = 1e-05, double atol = 1e-08,
              bool equal_nan = false);

// ---- template definitions ---------------------------------------------------------------------------

template <element_type T>
host_array host_array::full(shape_type shape, T value, am::dtype type) {
  host_array out = allocate_array(type, std::move(shape));
  fill_converted(out.data_.get(), type, &value, dtype_of<T>(), out.size_, true);
  return out;
}

template <element_type T>
host_array host_array::from_vector(const std::vector<T>& values, shape_type shape) {
  host_array out = allocate_array(dtype_of<T>(), {static_cast<std::int64_t>(values.size())});
  if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> packs bits
    for (std::size_t i = 0; i < values.size(); ++i) reinterpret_cast<bool*>(out.data_.get())[i] = values[i];
  } else if (!values.empty()) {
    std::memcpy(out.data_.get(), values.data(), values.size() * sizeof(T));
  }
  return out.reshape(std::move(shape));
}

template <element_type T>
T host_array::get(std::initializer_list<std::int64_t> index) const {
  T out{};
  fill_converted(reinterpret_cast<std::byte*>(&out), dtype_of<T>(),
                 data_.get() + flat_index({index.begin(), index.size()}) * size_of(dtype_), dtype_, 1);
  return out;
}

template <element_type T>
void host_array::set(std::initializer_list<std::int64_t> index, T value) const {
  fill_converted(data_.get() + flat_index({index.begin(), index.size()}) * size_of(dtype_), dtype_, &value,
                 dtype_of<T>(), 1);
}

template <element_type T>
T host_array::item() const {
  if (size_ != 1) throw value_error("can only convert an array of size 1 to a Python scalar");
  T out{};
  fill_converted(reinterpret_cast<std::byte*>(&out), dtype_of<T>(), data_.get(), dtype_, 1);
  return out;
}

template <element_type T>
std::vector<T> host_array::to_vector() const {
  if constexpr (std::is_same_v<T, bool>) {  // read bool bytes as bytes: any nonzero byte is true
    const host_array b = dtype_ == am::dtype::bool_ ? *this : astype(am::dtype::bool_);
    const auto* p = reinterpret_cast<const std::uint8_t*>(b.data_.get());
    std::vector<bool> out(static_cast<std::size_t>(size_));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = p[i] != 0;
    return out;
  } else {
    std::vector<T> out(static_cast<std::size_t>(size_));
    fill_converted(reinterpret_cast<std::byte*>(out.data()), dtype_of<T>(), data_.get(), dtype_, size_);
    return out;
  }
}

} // namespace am

#endif // ACTORMESH_SHARDING_HOST_ARRAY_HPP
