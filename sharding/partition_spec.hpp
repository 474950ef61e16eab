/// PartitionSpec: how each dimension of an array is split over the named axes of a mesh.
///
/// Mirrors `jax.sharding.PartitionSpec` (alias `P`): one entry per array dimension, each entry None
/// (not split), one mesh axis name, or a tuple of names (major first). Entries are kept in canonical
/// form, so equal specs compare equal however they were written, and they print exactly as JAX does.
#ifndef ACTORMESH_SHARDING_PARTITION_SPEC_HPP
#define ACTORMESH_SHARDING_PARTITION_SPEC_HPP

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace am {

/// The marker for an unsharded dimension, like Python's `None` in `P('x', None)`.
struct none_t {
  friend bool operator==(none_t, none_t) noexcept = default;
};

/// `am::none`: write `am::P("x", am::none)` for JAX's `P('x', None)`.
inline constexpr none_t none{};

/// One canonical PartitionSpec entry: the mesh axes one array dimension is split over, major first.
///
/// No axes means None; an empty tuple and the empty name are None too (as in JAX), and a
/// one-element tuple is the bare name. Two or more axes form a tuple.
class spec_entry {
public:
  /// None: the dimension is not split.
  spec_entry() = default;

  /// None, spelled `am::none`.
  spec_entry(none_t) noexcept {}

  /// One mesh axis name; the empty name means None (Python's falsy `''`).
  spec_entry(const char* name);

  /// One mesh axis name; the empty name means None.
  spec_entry(std::string name);

  /// A tuple of axis names, major first: `{"x", "y"}`. `{}` is None, `{"x"}` is the bare name.
  spec_entry(std::initializer_list<std::string> axes);

  /// A tuple of axis names, major first (canonicalized like the initializer-list form).
  explicit spec_entry(std::vector<std::string> axes);

  /// The axes, major first; empty for None.
  const std::vector<std::string>& axes() const noexcept { return axes_; }

  /// True when the dimension is not split.
  bool is_none() const noexcept { return axes_.empty(); }

  /// True when the entry is a tuple of two or more names (printed with parentheses).
  bool is_tuple() const noexcept { return axes_.size() > 1; }

  /// Python repr of the entry: `None`, `'x'` or `('x', 'y')`.
  std::string to_string() const;

  /// Equal when the canonical axes are equal.
  friend bool operator==(const spec_entry&, const spec_entry&) = default;

private:
  std::vector<std::string> axes_;
};

/// An entry as a user or a parser wrote it, before canonicalization: None, a name, or a tuple of
/// raw entries. It can express what JAX rejects (a tuple inside a tuple), which is how the
/// nested-tuple error is reached from C++ (`partition_spec::from_raw`) and from the command line.
struct raw_spec_entry {
  /// Which of the three forms this entry has.
  enum class kind { none, name, tuple };

  /// The form; `none` by default.
  kind form = kind::none;
  /// The axis name when `form == kind::name`.
  std::string name;
  /// The elements when `form == kind::tuple`.
  std::vector<raw_spec_entry> elements;

  /// None.
  static raw_spec_entry make_none() { return {}; }
  /// A bare name.
  static raw_spec_entry make_name(std::string n) { return {kind::name, std::move(n), {}}; }
  /// A tuple of raw entries.
  static raw_spec_entry make_tuple(std::vector<raw_spec_entry> e) { return {kind::tuple, {}, std::move(e)}; }
};

/// A PartitionSpec: one canonical entry per leading array dimension (missing trailing entries mean
/// None when applied to an array). Immutable value type.
class partition_spec {
public:
  /// `P()`: nothing split, fully replicated.
  partition_spec() = default;

  /// From entries: `partition_spec{"x", am::none}`, `partition_spec{{"x", "y"}}`.
  partition_spec(std::initializer_list<spec_entry> entries) : entries_(entries) {}

  /// From a vector of entries.
  explicit partition_spec(std::vector<spec_entry> entries) : entries_(std::move(entries)) {}

  /// Canonicalizes raw entries the way JAX does; throws am::value_error ("A tuple inside
  /// PartitionSpec cannot contain a nested tuple...") for a tuple that holds a tuple, and for None
  /// inside a tuple.
  static partition_spec from_raw(const std::vector<raw_spec_entry>& raw);

  /// Number of entries (not the array rank: trailing dimensions may be left out).
  std::size_t size() const noexcept { return entries_.size(); }

  /// True for `P()`.
  bool empty() const noexcept { return entries_.empty(); }

  /// The entry of dimension `i` (must be < size()).
  const spec_entry& operator[](std::size_t i) const { return entries_[i]; }

  /// All entries.
  const std::vector<spec_entry>& entries() const noexcept { return entries_; }

  /// Iteration over the entries.
  auto begin() const noexcept { return entries_.begin(); }
  /// End of iteration.
  auto end() const noexcept { return entries_.end(); }

  /// Every axis name used, in entry order (major first inside a tuple); duplicates kept.
  std::vector<std::string> used_axes() const;

  /// JAX's repr: `P()`, `P('x',)`, `P('x', None)`, `P(('x', 'y'),)`.
  std::string to_string() const;

  /// Entry-by-entry equality, like JAX (`P('x', None) != P('x')`).
  friend bool operator==(const partition_spec&, const partition_spec&) = default;

private:
  std::vector<spec_entry> entries_;
};

/// JAX's shorthand: `am::P("x", am::none)`, `am::P(std::vector<std::string>{"a", "b"})`, `am::P()`.
template <class... Entries>
partition_spec P(Entries&&... entries) {
  return partition_spec(std::vector<spec_entry>{spec_entry(std::forward<Entries>(entries))...});
}

/// Parses the command-line spec syntax into raw entries (not yet canonical): entries separated by
/// commas; `none` (or `None`) for an unsharded dimension; `a+b` or `(a,b)` for a tuple, major first;
/// the empty string (or only blanks) for `P()`. Throws am::value_error on bad syntax, and for
/// parentheses nested deeper than 16 levels (JAX refuses any tuple inside a tuple anyway).
std::vector<raw_spec_entry> parse_raw_partition_spec(std::string_view text);

/// `partition_spec::from_raw(parse_raw_partition_spec(text))`: `"x,none"` -> `P('x', None)`,
/// `"a+b"` -> `P(('a', 'b'),)`, `""` -> `P()`.
partition_spec parse_partition_spec(std::string_view text);

} // namespace am

#endif // ACTORMESH_SHARDING_PARTITION_SPEC_HPP
