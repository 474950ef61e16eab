/// A colocated object's constructor arguments as they travel to the worker process that builds
/// the instance (single-controller mode). Code never travels: every process of the binary knows
/// how to build a T from arguments of types A... because the program constructs such an object
/// somewhere (`adder_class(1)` instantiates travelling_constructor<adder, int>, whose registration
/// runs at static initialization in every process of the binary, workers too). Arguments of
/// the types actors/value_wire.hpp encodes travel; an object recorded with any other
/// argument type works in this process and is refused, with a clear error, in a worker. Internal.
#ifndef ACTORMESH_COLOCATED_DETAIL_CONSTRUCTOR_WIRE_HPP
#define ACTORMESH_COLOCATED_DETAIL_CONSTRUCTOR_WIRE_HPP

#include "actormesh/actors/value_wire.hpp"

#include <concepts>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <vector>

namespace am::detail {

/// Builds an instance from encoded arguments (type-erased: a T held by a shared_ptr<void>).
using constructor_from_bytes = std::function<std::shared_ptr<void>(const std::string& arguments)>;

/// Registers how to build `key` (the same key twice keeps the first: every copy is the same code).
void register_constructor(const std::string& key, constructor_from_bytes make);

/// The constructor registered as `key`; throws am::value_error when there is none.
constructor_from_bytes find_constructor(const std::string& key);

/// How a constructor argument of type A is recorded: its decayed type, C strings as std::string.
template <class A>
using recorded_argument = std::conditional_t<std::is_same_v<std::decay_t<A>, const char*> || std::is_same_v<std::decay_t<A>, char*>,
                                             std::string, std::decay_t<A>>;

/// Constructor arguments of types A... as bytes: encoded when every type travels, decoded in
/// order, refusing bytes left over (am::value_error).
template <class... A>
struct argument_wire {
  static constexpr bool can_travel = (travels<A> && ...);

  /// The arguments encoded, or nothing when one of their types cannot travel.
  static std::optional<std::string> encode(const A&... args) {
    if constexpr (can_travel) {
      wire_writer w;
      (write_value(w, args), ...);
      return w.take();
    } else {
      return std::nullopt;
    }
  }

  /// The arguments of `bytes` (only for types that travel).
  static std::tuple<A...> decode(const std::string& bytes) {
    wire_reader r(bytes);
    std::tuple<A...> args{read_value<A>(r)...}; // braces: read in order
    r.finish();
    return args;
  }
};

/// How a T built from A... travels: its registry key, its arguments' encoding, and the
/// registration itself (a static member's initializer, run in every process of the binary).
template <class T, class... A>
struct travelling_constructor {
  static constexpr bool can_travel = argument_wire<A...>::can_travel;

  /// The registry key: the C++ types, as this binary names them.
  static std::string key() {
    (void)registered; // odr-use: instantiating key() instantiates the registration
    return make_key();
  }

  /// The arguments encoded, or nothing when one of their types cannot travel.
  static std::optional<std::string> encode(const A&... args) { return argument_wire<A...>::encode(args...); }

private:
  // Appended in place: GCC 12 at -O1 warns (-Warray-bounds, a false positive) about the
  // temporaries of `std::string(a) + "/" + b` when the type names are long.
  static std::string make_key() {
    std::string key(typeid(T).name());
    key.append("/").append(typeid(std::tuple<A...>).name());
    return key;
  }

  static std::shared_ptr<void> build(const std::string& bytes) {
    if constexpr (can_travel) {
      return std::static_pointer_cast<void>(std::apply([](const auto&... a) { return std::make_shared<T>(a...); },
                                                       argument_wire<A...>::decode(bytes)));
    } else {
      return nullptr; // never sent: encode() gave nothing
    }
  }

  static inline const bool registered = (register_constructor(make_key(), &build), true);
};

} // namespace am::detail

#endif // ACTORMESH_COLOCATED_DETAIL_CONSTRUCTOR_WIRE_HPP
