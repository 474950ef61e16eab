/// What a member function pointer tells about an endpoint: its class, result and parameters, and the
/// bytes that identify it among a class's endpoints. Internal.
#pragma once

#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>

namespace am::detail {

template <class M>
struct endpoint_traits; // only member functions are endpoints

#define AM_ENDPOINT_TRAITS(QUALIFIERS)                                                                           \
  template <class C, class R, class... P>                                                                        \
  struct endpoint_traits<R (C::*)(P...) QUALIFIERS> {                                                            \
    using owner = C;                                                                                             \
    using result = std::decay_t<R>;                                                                              \
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
