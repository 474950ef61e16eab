/// What a member function pointer tells about an endpoint: its class, result and parameters, and the
/// bytes that identify it among a class's endpoints. Internal.
#ifndef ACTORMESH_ACTOR_MESH_DETAIL_ENDPOINT_TRAITS_HPP
#define ACTORMESH_ACTOR_MESH_DETAIL_ENDPOINT_TRAITS_HPP

#include "actormesh/actors/task.hpp"

#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>

namespace am::detail {

template <class M>
struct endpoint_traits; // only member functions are endpoints

/// What a call of an endpoint returning R gives its caller: R, or T for a coroutine endpoint
/// returning am::task<T>.
template <class R>
struct endpoint_answer {
  using type = R;
  static constexpr bool coroutine = false;
};
template <class T>
struct endpoint_answer<task<T>> {
  using type = T;
  static constexpr bool coroutine = true;
};

#define AM_ENDPOINT_TRAITS(QUALIFIERS)                                                                           \
  template <class C, class R, class... P>                                                                        \
  struct endpoint_traits<R (C::*)(P...) QUALIFIERS> {                                                            \
    using owner = C;                                                                                             \
    using returned = std::decay_t<R>;                                                                            \
    using result = typename endpoint_answer<returned>::type;                                                     \
    static constexpr bool coroutine = endpoint_answer<returned>::coroutine;                                      \
    using arguments = std::tuple<std::decay_t<P>...>;                                                            \
    static constexpr bool parameters_by_value_or_const_ref =                                                    \
      ((!std::is_reference_v<P> || (std::is_lvalue_reference_v<P> && std::is_const_v<std::remove_reference_t<P>>)) \
       && ...);                                                                                                  \
  };
AM_ENDPOINT_TRAITS()
AM_ENDPOINT_TRAITS(const)
AM_ENDPOINT_TRAITS(noexcept)
AM_ENDPOINT_TRAITS(const noexcept)
#undef AM_ENDPOINT_TRAITS

/// The bytes of a member function pointer: equal pointers of one type have equal bytes.
template <class M>
std::string member_bytes(M pm) {
  std::string bytes(sizeof(M), '\0');
  std::memcpy(bytes.data(), &pm, sizeof(M));
  return bytes;
}

} // namespace am::detail

#endif // ACTORMESH_ACTOR_MESH_DETAIL_ENDPOINT_TRAITS_HPP
