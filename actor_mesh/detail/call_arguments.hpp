/// A call's arguments as its task holds them: the tuple itself (a call to one actor: one
/// allocation) or a pointer to one tuple shared by every actor of a call. Internal.
#ifndef ACTORMESH_ACTOR_MESH_DETAIL_CALL_ARGUMENTS_HPP
#define ACTORMESH_ACTOR_MESH_DETAIL_CALL_ARGUMENTS_HPP

#include <memory>
#include <type_traits>

namespace am::detail {

template <class H>
struct is_shared_arguments : std::false_type {};
template <class A>
struct is_shared_arguments<std::shared_ptr<const A>> : std::true_type {};

/// The argument tuple of `holder`.
template <class Holder>
const auto& arguments_of(const Holder& holder) {
  if constexpr (is_shared_arguments<Holder>::value)
    return *holder;
  else
    return holder;
}

} // namespace am::detail

#endif // ACTORMESH_ACTOR_MESH_DETAIL_CALL_ARGUMENTS_HPP
