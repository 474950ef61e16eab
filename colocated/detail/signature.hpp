/// The C++ signature of a callable or a member function, as `R(Args...)` with decayed argument
/// types: what a colocated function or method is registered and looked up with.
#ifndef ACTORMESH_COLOCATED_DETAIL_SIGNATURE_HPP
#define ACTORMESH_COLOCATED_DETAIL_SIGNATURE_HPP

#include <type_traits>

namespace am::detail {

template <class T>
struct signature_of_impl : signature_of_impl<decltype(&T::operator())> {};

template <class R, class... A>
struct signature_of_impl<R (*)(A...)> {
  using type = R(std::decay_t<A>...);
};
template <class R, class... A>
struct signature_of_impl<R(A...)> {
  using type = R(std::decay_t<A>...);
};
template <class C, class R, class... A>
struct signature_of_impl<R (C::*)(A...)> {
  using type = R(std::decay_t<A>...);
};
template <class C, class R, class... A>
struct signature_of_impl<R (C::*)(A...) const> {
  using type = R(std::decay_t<A>...);
};
template <class C, class R, class... A>
struct signature_of_impl<R (C::*)(A...) noexcept> {
  using type = R(std::decay_t<A>...);
};
template <class C, class R, class... A>
struct signature_of_impl<R (C::*)(A...) const noexcept> {
  using type = R(std::decay_t<A>...);
};

/// The class of a member function pointer.
template <class M>
struct member_class;
template <class C, class M>
struct member_class<M C::*> {
  using type = C;
};

/// `R(Args...)` of a function pointer, a lambda without `auto` parameters, a function object with
/// one call operator, or a member function.
template <class F>
using signature_of = typename signature_of_impl<std::decay_t<F>>::type;

} // namespace am::detail

#endif // ACTORMESH_COLOCATED_DETAIL_SIGNATURE_HPP
