/// How the instances of an actor mesh are built: from the arguments of `spawn` in the spawning
/// process, and from their encoding in a single-controller cluster's worker, which runs the same
/// binary (spawning a T from A... anywhere in the program instantiates the registration below,
/// which runs at static initialization in every process, workers too). Arguments of the types
/// actors/value_wire.hpp encodes travel; a mesh spawned with others works where it was spawned
/// and is refused, with a clear error, for points in a worker. Internal.
#ifndef ACTORMESH_ACTOR_MESH_DETAIL_ACTOR_CONSTRUCTOR_HPP
#define ACTORMESH_ACTOR_MESH_DETAIL_ACTOR_CONSTRUCTOR_HPP

#include "actormesh/actor_mesh/actor_layout.hpp"
#include "actormesh/actor_mesh/detail/mesh_core.hpp"
#include "actormesh/colocated/detail/constructor_wire.hpp"

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>

namespace am::detail {

/// A T built from recorded arguments A... (see recorded_argument), with the point first when T
/// takes `const am::actor_point&` before them.
template <class T, class... A>
struct actor_constructor {
  using wire = argument_wire<A...>;

  static constexpr bool constructible =
    std::is_constructible_v<T, const A&...> || std::is_constructible_v<T, const actor_point&, const A&...>;

  /// The registry key of this constructor (registry of constructor_wire.hpp).
  static std::string key() {
    (void)registered; // odr-use: instantiating key() instantiates the registration
    return make_key();
  }

  /// Builds a T per point from `args`, shared by every point.
  static actor_factory factory(std::shared_ptr<const std::tuple<A...>> args) {
    return [args = std::move(args)](const actor_point& point) {
      return std::apply(
        [&point](const auto&... a) -> std::shared_ptr<void> {
          if constexpr (std::is_constructible_v<T, const actor_point&, const A&...>)
            return std::make_shared<T>(point, a...);
          else
            return std::make_shared<T>(a...);
        },
        *args);
    };
  }

  /// How a worker builds them: the key, and `args` encoded when asked (nothing when a type of
  /// theirs cannot travel).
  static remote_construction remote(std::shared_ptr<const std::tuple<A...>> args) {
    return remote_construction{key(), [args = std::move(args)]() -> std::optional<std::string> {
                                 return std::apply([](const A&... a) { return wire::encode(a...); }, *args);
                               }};
  }

private:
  static std::string make_key() {
    return std::string("actor/") + typeid(T).name() + "/" + typeid(std::tuple<A...>).name();
  }

  /// The factory (an actor_factory held by a shared_ptr<void>) of the encoded arguments `bytes`.
  static std::shared_ptr<void> build(const std::string& bytes) {
    if constexpr (wire::can_travel && constructible) {
      return std::make_shared<actor_factory>(factory(std::make_shared<const std::tuple<A...>>(wire::decode(bytes))));
    } else {
      return nullptr; // never sent: remote() encodes nothing
    }
  }

  static inline const bool registered = (register_constructor(make_key(), &build), true);
};

} // namespace am::detail

#endif // ACTORMESH_ACTOR_MESH_DETAIL_ACTOR_CONSTRUCTOR_HPP
