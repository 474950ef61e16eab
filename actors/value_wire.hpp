/// Values as they travel between processes (an actor's endpoint arguments and answers, a colocated
/// object's constructor arguments): booleans, numbers, enums, strings, and the standard containers
/// of them (vector, array, map, unordered_map, set, pair, tuple, optional), and a user's struct
/// with an inspect overload, CAF's convention:
///
///     struct point { double x, y; };
///     template <class Inspector> bool inspect(Inspector& f, point& p) { return f(p.x, p.y); }
///
/// Another type can take part with a specialization of am::detail::wire_value<T>. Reading checks
/// every length against the bytes left (am::value_error, never a crash or an unbounded allocation).
#ifndef ACTORMESH_ACTORS_VALUE_WIRE_HPP
#define ACTORMESH_ACTORS_VALUE_WIRE_HPP

#include "actormesh/actors/wire_codec.hpp"

#include <array>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace am::detail {

/// Specialize for a type the rules below do not cover: `static void write(wire_writer&, const T&)`
/// and `static T read(wire_reader&)`.
template <class T>
struct wire_value;

template <class T>
concept has_wire_value = requires(wire_writer& w, wire_reader& r, const T& v) {
  wire_value<T>::write(w, v);
  { wire_value<T>::read(r) } -> std::same_as<T>;
};

template <class T>
void write_value(wire_writer& w, const T& value);
template <class T>
T read_value(wire_reader& r);

/// The inspector that writes a struct's fields (`f(p.x, p.y)`).
struct writing_inspector {
  using result_type = bool;
  wire_writer& w;
  template <class... F>
  bool operator()(F&... fields) {
    (write_value(w, fields), ...);
    return true;
  }
};

/// The inspector that reads a struct's fields back, in the same order.
struct reading_inspector {
  using result_type = bool;
  wire_reader& r;
  template <class... F>
  bool operator()(F&... fields) {
    ((fields = read_value<std::remove_cv_t<F>>(r)), ...);
    return true;
  }
};

template <class T>
concept inspectable = std::is_default_constructible_v<T> && requires(writing_inspector& f, T& x) { inspect(f, x); };

template <class T>
struct travels_impl : std::bool_constant<std::is_arithmetic_v<T> || std::is_enum_v<T> || has_wire_value<T>
                                         || inspectable<T>> {};
template <>
struct travels_impl<std::string> : std::true_type {};
template <class T, class A>
struct travels_impl<std::vector<T, A>> : travels_impl<T> {};
template <class T, std::size_t N>
struct travels_impl<std::array<T, N>> : travels_impl<T> {};
template <class K, class V, class C, class A>
struct travels_impl<std::map<K, V, C, A>> : std::bool_constant<travels_impl<K>::value && travels_impl<V>::value> {};
template <class K, class V, class H, class E, class A>
struct travels_impl<std::unordered_map<K, V, H, E, A>>
    : std::bool_constant<travels_impl<K>::value && travels_impl<V>::value> {};
template <class K, class C, class A>
struct travels_impl<std::set<K, C, A>> : travels_impl<K> {};
template <class A, class B>
struct travels_impl<std::pair<A, B>>
    : std::bool_constant<travels_impl<std::remove_cv_t<A>>::value && travels_impl<std::remove_cv_t<B>>::value> {};
template <class... T>
struct travels_impl<std::tuple<T...>> : std::bool_constant<(travels_impl<T>::value && ...)> {};
template <class T>
struct travels_impl<std::optional<T>> : travels_impl<T> {};

/// True for a type whose values can travel (write_value / read_value compile for it).
template <class T>
inline constexpr bool travels = travels_impl<std::remove_cv_t<T>>::value;

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T>
struct is_std_array : std::false_type {};
template <class T, std::size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};
template <class T>
struct is_mapping : std::false_type {};
template <class K, class V, class C, class A>
struct is_mapping<std::map<K, V, C, A>> : std::true_type {};
template <class K, class V, class H, class E, class A>
struct is_mapping<std::unordered_map<K, V, H, E, A>> : std::true_type {};
template <class T>
struct is_set : std::false_type {};
template <class K, class C, class A>
struct is_set<std::set<K, C, A>> : std::true_type {};
template <class T>
struct is_pair : std::false_type {};
template <class A, class B>
struct is_pair<std::pair<A, B>> : std::true_type {};
template <class T>
struct is_tuple : std::false_type {};
template <class... T>
struct is_tuple<std::tuple<T...>> : std::true_type {};
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
void write_value(wire_writer& w, const T& value) {
  static_assert(travels<T>, "this type cannot travel between processes: give it an inspect overload");
  if constexpr (has_wire_value<T>) {
    wire_value<T>::write(w, value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    w.str(value);
  } else if constexpr (std::is_enum_v<T>) {
    write_value(w, static_cast<std::underlying_type_t<T>>(value));
  } else if constexpr (std::is_arithmetic_v<T>) {
    static_assert(sizeof(T) <= 8);
    std::uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    w.u64(bits);
  } else if constexpr (is_vector<T>::value || is_mapping<T>::value || is_set<T>::value) {
    w.u64(value.size());
    for (const auto& v : value)
      write_value(w, v);
  } else if constexpr (is_std_array<T>::value) {
    for (const auto& v : value)
      write_value(w, v);
  } else if constexpr (is_pair<T>::value) {
    write_value(w, value.first);
    write_value(w, value.second);
  } else if constexpr (is_tuple<T>::value) {
    std::apply([&w](const auto&... v) { (write_value(w, v), ...); }, value);
  } else if constexpr (is_optional<T>::value) {
    w.u8(value ? 1 : 0);
    if (value)
      write_value(w, *value);
  } else {
    writing_inspector f{w};
    inspect(f, const_cast<T&>(value)); // the writing inspector only reads the fields
  }
}

template <class T>
T read_value(wire_reader& r) {
  static_assert(travels<T>, "this type cannot travel between processes: give it an inspect overload");
  if constexpr (has_wire_value<T>) {
    return wire_value<T>::read(r);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return r.str();
  } else if constexpr (std::is_enum_v<T>) {
    return static_cast<T>(read_value<std::underlying_type_t<T>>(r));
  } else if constexpr (std::is_arithmetic_v<T>) {
    auto bits = r.u64();
    T value{};
    std::memcpy(&value, &bits, sizeof(T));
    if constexpr (std::is_same_v<T, bool>)
      value = bits != 0;
    return value;
  } else if constexpr (is_vector<T>::value) {
    auto n = r.u64();
    T out; // grown as read: a count past the message's end fails on a read, allocating little
    for (std::uint64_t k = 0; k < n; ++k)
      out.push_back(read_value<typename T::value_type>(r));
    return out;
  } else if constexpr (is_mapping<T>::value) {
    auto n = r.u64();
    T out;
    for (std::uint64_t k = 0; k < n; ++k) {
      auto key = read_value<typename T::key_type>(r);
      out.insert_or_assign(std::move(key), read_value<typename T::mapped_type>(r));
    }
    return out;
  } else if constexpr (is_set<T>::value) {
    auto n = r.u64();
    T out;
    for (std::uint64_t k = 0; k < n; ++k)
      out.insert(read_value<typename T::key_type>(r));
    return out;
  } else if constexpr (is_std_array<T>::value) {
    T out{};
    for (auto& v : out)
      v = read_value<typename T::value_type>(r);
    return out;
  } else if constexpr (is_pair<T>::value) {
    auto first = read_value<typename T::first_type>(r);
    return T(std::move(first), read_value<typename T::second_type>(r));
  } else if constexpr (is_tuple<T>::value) {
    return []<std::size_t... k>(wire_reader& in, std::index_sequence<k...>) {
      return T{read_value<std::tuple_element_t<k, T>>(in)...}; // braces: read in order
    }(r, std::make_index_sequence<std::tuple_size_v<T>>{});
  } else if constexpr (is_optional<T>::value) {
    if (r.u8() == 0)
      return T{};
    return T(read_value<typename T::value_type>(r));
  } else {
    T out{};
    reading_inspector f{r};
    inspect(f, out);
    return out;
  }
}

} // namespace am::detail

#endif // ACTORMESH_ACTORS_VALUE_WIRE_HPP
