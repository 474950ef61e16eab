#include "actormesh/sharding/positional_sharding.hpp"

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/errors.hpp"
#include "sharding/detail/py_format.hpp"

#include <algorithm>
#include <cctype>

namespace am {

namespace {

// Row-major strides of `shape`.
std::vector<std::int64_t> strides_of(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t k = shape.size(); k-- > 1;)
    s[k - 1] = s[k] * shape[k];
  return s;
}

std::vector<std::int64_t> unravel(std::int64_t flat, const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> c(shape.size(), 0);
  for (std::size_t k = shape.size(); k-- > 0;) {
    c[k] = flat % shape[k];
    flat /= shape[k];
  }
  return c;
}

std::size_t normalize_axis(int axis, std::size_t ndim) {
  const auto n = static_cast<int>(ndim);
  if (axis < -n || axis >= n)
    throw value_error("axis " + std::to_string(axis) + " is out of bounds for array of dimension " +
                      std::to_string(ndim));
  return static_cast<std::size_t>(axis < 0 ? axis + n : axis);
}

std::string upper_platform(const device& d) {
  return d.platform == platform::cuda ? "GPU" : "CPU";
}

// numpy's _formatArray for an object array (no padding of elements, ' ' separator), as used by
// np.array2string(ids, prefix='PositionalSharding(', suffix=')', max_line_width=100).
class numpy_formatter {
public:
  numpy_formatter(const std::vector<std::int64_t>& shape, const std::vector<std::string>& items,
                  std::size_t line_width)
      : shape_(shape), items_(items), strides_(strides_of(shape)), line_width_(line_width) {}

  std::string format(const std::string& next_line_prefix) {
    return recurse(0, 0, next_line_prefix, line_width_);
  }

private:
  void extend(std::string& s, std::string& line, const std::string& word, std::size_t width,
              const std::string& prefix) const {
    bool wrap = line.size() + word.size() > width;
    if (line.size() <= prefix.size())
      wrap = false;
    if (wrap) {
      auto end = line.find_last_not_of(' ');
      s += line.substr(0, end == std::string::npos ? 0 : end + 1) + "\n";
      line = prefix;
    }
    line += word;
  }

  std::string recurse(std::size_t axis, std::int64_t offset, const std::string& hanging, std::size_t width) {
    if (axis == shape_.size())
      return items_[static_cast<std::size_t>(offset)];
    const std::string next_hanging = hanging + " ";
    const std::size_t next_width = width - 1;
    const auto n = shape_[axis];
    std::string s;
    if (axis + 1 == shape_.size()) {
      const std::size_t elem_width = width - 1;
      std::string line = hanging;
      for (std::int64_t i = 0; i < n; ++i) {
        extend(s, line, recurse(axis + 1, offset + i * strides_[axis], next_hanging, next_width), elem_width,
               hanging);
        if (i + 1 < n)
          line += " ";
      }
      s += line;
    } else {
      const std::string line_sep(shape_.size() - axis - 1, '\n');
      for (std::int64_t i = 0; i < n; ++i) {
        s += hanging + recurse(axis + 1, offset + i * strides_[axis], next_hanging, next_width);
        if (i + 1 < n)
          s += line_sep;
      }
    }
    return "[" + s.substr(hanging.size()) + "]";
  }

  const std::vector<std::int64_t>& shape_;
  const std::vector<std::string>& items_;
  std::vector<std::int64_t> strides_;
  std::size_t line_width_;
};

} // namespace

positional_sharding::positional_sharding(const device_grid& devices)
    : devices_(devices.devices()), shape_(devices.shape()) {
  if (devices_.empty())
    throw value_error("PositionalSharding.__init__ requires at least one device, got []");
  for (std::size_t i = 0; i < devices_.size(); ++i)
    cells_.push_back({static_cast<int>(i)});
}

positional_sharding::positional_sharding(std::vector<device> devices)
    : positional_sharding(device_grid(std::move(devices))) {}

positional_sharding::positional_sharding(std::vector<device> devices, std::vector<std::int64_t> shape,
                                         std::vector<std::vector<int>> cells)
    : devices_(std::move(devices)), shape_(std::move(shape)), cells_(std::move(cells)) {}

positional_sharding positional_sharding::reshape(std::vector<std::int64_t> shape) const {
  // device_grid implements numpy's reshape rules and errors on a stand-in grid of the same size.
  device_grid stand_in(std::vector<device>(cells_.size()));
  auto reshaped = stand_in.reshape(std::move(shape));
  return positional_sharding(devices_, reshaped.shape(), cells_);
}

positional_sharding positional_sharding::transpose(std::vector<int> axes) const {
  const auto n = ndim();
  std::vector<std::size_t> perm(n);
  if (axes.empty()) {
    for (std::size_t i = 0; i < n; ++i)
      perm[i] = n - 1 - i;
  } else {
    if (axes.size() != n)
      throw value_error("axes don't match array");
    std::vector<bool> used(n, false);
    for (std::size_t i = 0; i < n; ++i) {
      perm[i] = normalize_axis(axes[i], n);
      if (used[perm[i]])
        throw value_error("repeated axis in transpose");
      used[perm[i]] = true;
    }
  }
  std::vector<std::int64_t> shape(n);
  for (std::size_t i = 0; i < n; ++i)
    shape[i] = shape_[perm[i]];
  const auto old_strides = strides_of(shape_);
  std::vector<std::vector<int>> cells(cells_.size());
  for (std::size_t flat = 0; flat < cells.size(); ++flat) {
    const auto c = unravel(static_cast<std::int64_t>(flat), shape);
    std::int64_t old = 0;
    for (std::size_t i = 0; i < n; ++i)
      old += c[i] * old_strides[perm[i]];
    cells[flat] = cells_[static_cast<std::size_t>(old)];
  }
  return positional_sharding(devices_, std::move(shape), std::move(cells));
}

positional_sharding positional_sharding::replicate(std::optional<int> axis, bool keepdims) const {
  std::vector<bool> reduced(ndim(), !axis.has_value());
  if (axis)
    reduced[normalize_axis(*axis, ndim())] = true;
  std::vector<std::int64_t> kept_shape(ndim()); // the reduced axes as size 1
  for (std::size_t k = 0; k < ndim(); ++k)
    kept_shape[k] = reduced[k] ? 1 : shape_[k];
  const auto kept_strides = strides_of(kept_shape);
  std::vector<std::vector<int>> cells(static_cast<std::size_t>(element_count(kept_shape)));
  for (std::size_t flat = 0; flat < cells_.size(); ++flat) {
    const auto c = unravel(static_cast<std::int64_t>(flat), shape_);
    std::int64_t out = 0;
    for (std::size_t k = 0; k < ndim(); ++k)
      out += (reduced[k] ? 0 : c[k]) * kept_strides[k];
    auto& cell = cells[static_cast<std::size_t>(out)];
    cell.insert(cell.end(), cells_[flat].begin(), cells_[flat].end());
  }
  for (auto& cell : cells) {
    std::sort(cell.begin(), cell.end());
    cell.erase(std::unique(cell.begin(), cell.end()), cell.end());
  }
  std::vector<std::int64_t> shape;
  for (std::size_t k = 0; k < ndim(); ++k)
    if (!reduced[k] || keepdims)
      shape.push_back(kept_shape[k]);
  return positional_sharding(devices_, std::move(shape), std::move(cells));
}

std::vector<std::vector<device>> positional_sharding::device_sets() const {
  std::vector<std::vector<device>> out;
  for (const auto& cell : cells_) {
    std::vector<device> set;
    for (int pos : cell)
      set.push_back(devices_[static_cast<std::size_t>(pos)]);
    out.push_back(std::move(set));
  }
  return out;
}

void positional_sharding::check_rank(std::size_t ndim) const {
  if (ndim != shape_.size() && !is_fully_replicated())
    throw value_error("Sharding " + to_string() + " is only valid for values of rank " +
                      std::to_string(shape_.size()) + ", but was applied to a value of rank " +
                      std::to_string(ndim));
}

tile_layout positional_sharding::layout(std::size_t ndim) const {
  check_rank(ndim);
  tile_layout out;
  out.tile_of.assign(devices_.size(), std::vector<std::int64_t>(ndim, 0));
  if (is_fully_replicated()) {
    out.partitions.assign(ndim, 1);
    return out;
  }
  out.partitions = shape_;
  const auto set_size = cells_.front().size();
  for (std::size_t flat = 0; flat < cells_.size(); ++flat) {
    if (cells_[flat].size() != set_size)
      throw value_error("PositionalSharding needs device sets of one size, got " + to_string());
    const auto c = unravel(static_cast<std::int64_t>(flat), shape_);
    for (int pos : cells_[flat])
      out.tile_of[static_cast<std::size_t>(pos)] = c;
  }
  return out;
}

bool positional_sharding::is_fully_replicated() const {
  return std::all_of(shape_.begin(), shape_.end(), [](std::int64_t d) { return d == 1; });
}

std::string positional_sharding::to_string() const {
  const std::string name = upper_platform(devices_.front());
  std::vector<std::string> items;
  for (const auto& cell : cells_) {
    std::vector<int> ids;
    for (int pos : cell)
      ids.push_back(devices_[static_cast<std::size_t>(pos)].id);
    std::sort(ids.begin(), ids.end());
    std::string item = "{" + name + " ";
    for (std::size_t i = 0; i < ids.size(); ++i)
      item += (i > 0 ? ", " : "") + std::to_string(ids[i]);
    items.push_back(item + "}");
  }
  const std::string prefix = "PositionalSharding(";
  numpy_formatter f(shape_, items, 100 - 1);
  return prefix + f.format(std::string(prefix.size() + 1, ' ')) + ")";
}

std::shared_ptr<const positional_sharding> share(positional_sharding s) {
  return std::make_shared<const positional_sharding>(std::move(s));
}

} // namespace am
