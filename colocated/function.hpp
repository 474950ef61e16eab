/// Colocated functions (jax.experimental.colocated_python.colocated_python): a C++ function
/// registered by name that runs on the host of the CPU devices its array arguments live on, in the
/// caller's lane of that host, and returns arrays on the same devices.
///
///     const auto add_one = am::colocated_python("add_one", [](const am::array& x) { return x + 1; });
///     am::array y = add_one(x);         // the first call for x's signature runs at once; later ones
///                                       // return at once and run in this thread's order
///     auto g = add_one.specialize({.out_specs_fn = [](const am::spec_tree& in) { return in[0]; }});
///     am::array z = g(x);               // asynchronous from the first call
#ifndef ACTORMESH_COLOCATED_FUNCTION_HPP
#define ACTORMESH_COLOCATED_FUNCTION_HPP

#include "actormesh/actors/future.hpp"
#include "actormesh/colocated/detail/flat_tree.hpp"
#include "actormesh/colocated/detail/function_core.hpp"
#include "actormesh/colocated/detail/registry.hpp"
#include "actormesh/colocated/detail/signature.hpp"
#include "actormesh/colocated/specialization.hpp"

#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <utility>

namespace am {

template <class Sig>
class colocated_function;

/// A colocated function of signature `R(Args...)`: Args and R are trees of am::array (an array, or
/// std::vector / std::tuple / std::pair / std::array / std::map<std::string, ...> of them; R may
/// also be void). Copies share the output specs learned so far.
///
/// Rules (JAX's): every array argument must be on the same device list, of CPU devices of this
/// process; a function without array arguments needs `specialize({.devices = ...})`; a value that
/// is not an am::array (a host array, a scalar) is refused. The body may block, sleep and do I/O:
/// it holds up only the lane of the thread that called it. A function returning void returns an
/// am::future<void> instead, always asynchronously.
template <class R, class... Args>
class colocated_function<R(Args...)> {
public:
  /// What a call returns: R, or am::future<void> for a function returning nothing.
  using result_type = std::conditional_t<std::is_void_v<R>, future<void>, R>;

  /// Calls the function (see the class comment for when it waits).
  result_type operator()(const Args&... args) const {
    auto inputs = detail::flatten_arrays(std::tuple<Args...>(args...));
    if constexpr (std::is_void_v<R>)
      return core_->call_void(inputs);
    else
      return detail::unflatten_arrays<R>(core_->call(inputs));
  }

  /// The same function, specialized further; a field given twice throws am::value_error
  /// ("in_specs already specified", "out_specs_fn already specified", "devices already specified").
  colocated_function specialize(const specialization& more) const {
    return colocated_function(core_->specialized(more));
  }

  /// The registered name (a method's name for an object's method).
  const std::string& name() const noexcept { return core_->name(); }

  /// The number of input signatures whose output specs are known (diagnostics and tests).
  std::size_t known_signatures() const { return core_->known_signatures(); }

  /// The wrapper of the function already registered as `name` (in this process, as in every
  /// process of the same binary); throws am::value_error when there is none and am::type_error
  /// when it was registered with another signature.
  static colocated_function registered(const std::string& name) {
    auto entry = detail::find_function(name);
    detail::check_signature(entry->signature, typeid(R(Args...)), "colocated function '" + name + "'");
    return colocated_function(std::make_shared<const detail::function_core>(detail::call_target{name, nullptr},
                                                                            specialization{}));
  }

  /// Wraps a core; for the library's own use.
  explicit colocated_function(std::shared_ptr<const detail::function_core> core) : core_(std::move(core)) {}

private:
  std::shared_ptr<const detail::function_core> core_;
};

namespace detail {

/// The type-erased body of `f`: rebuilds the arguments, calls f, flattens what it returns.
template <class Sig, class F>
struct erased_function;

template <class R, class... Args, class F>
struct erased_function<R(Args...), F> {
  F f;
  flat_tree operator()(const flat_tree& inputs) const {
    auto args = unflatten_arrays<std::tuple<Args...>>(inputs);
    if constexpr (std::is_void_v<R>) {
      std::apply(f, args);
      return flat_tree{tree_structure(std::tuple<>{}), {}};
    } else {
      return flatten_arrays(std::apply(f, args));
    }
  }
};

} // namespace detail

/// Registers `f` as the colocated function `name` and returns its wrapper. Register every function
/// in every process of the program (at namespace scope, or before any call): calls name what they
/// run. `f` is a function pointer, or a function object with one call operator whose parameter
/// types are spelled out (no `auto` parameters), since the signature is taken from it; for a
/// templated or overloaded body, name its signatures (the overload below). Throws
/// am::value_error when `name` is already registered.
template <class F>
  requires(!std::is_function_v<F>)
auto colocated_python(const std::string& name, F f) {
  using sig = detail::signature_of<F>;
  detail::register_function(name, detail::erased_function<sig, F>{std::move(f)}, typeid(sig));
  return colocated_function<sig>::registered(name);
}

/// One colocated function with several signatures, as a templated or overloaded body has (JAX's
/// add_one takes an array or a tree of them): a call runs the first signature, in the order given,
/// that its arguments convert to, chosen at compile time; no signature fits, no compile.
template <class... Sigs>
class colocated_overloads {
  /// The index of the first signature that takes arguments of types A..., or sizeof...(Sigs).
  template <class... A>
  static constexpr std::size_t first_taking() {
    constexpr bool takes[] = {std::is_invocable_v<const colocated_function<Sigs>&, const A&...>...};
    for (std::size_t k = 0; k < sizeof...(Sigs); ++k)
      if (takes[k])
        return k;
    return sizeof...(Sigs);
  }

public:
  /// Calls the first signature that takes `args` (a constraint: arguments no signature takes do
  /// not compile).
  template <class... A>
    requires(first_taking<A...>() < sizeof...(Sigs))
  decltype(auto) operator()(const A&... args) const {
    return std::get<first_taking<A...>()>(functions_)(args...);
  }

  /// Every signature specialized with `more` (as colocated_function::specialize).
  colocated_overloads specialize(const specialization& more) const {
    return std::apply([&](const auto&... f) { return colocated_overloads(f.specialize(more)...); }, functions_);
  }

  /// The wrapper of signature k (its registered name is "<name>#k").
  template <std::size_t K>
  const auto& overload() const noexcept {
    return std::get<K>(functions_);
  }

  /// Wraps one function per signature; for colocated_python's use.
  explicit colocated_overloads(colocated_function<Sigs>... functions) : functions_(std::move(functions)...) {}

private:
  std::tuple<colocated_function<Sigs>...> functions_;
};

/// Registers the templated or overloaded body `f` once per signature (`am::array(am::array)`,
/// `std::vector<am::array>(std::vector<am::array>)`, ...), as "<name>#0", "<name>#1", ..., and
/// returns one wrapper for all:
///
///     struct add_one_body {
///       am::array operator()(const am::array& x) const { return x + 1; }
///       std::vector<am::array> operator()(const std::vector<am::array>& xs) const; // each + 1
///     };
///     using list = std::vector<am::array>;
///     const auto add_one = am::colocated_python<am::array(am::array), list(list)>("add_one", add_one_body{});
///
/// Throws am::value_error when one of the names is already registered.
template <class Sig, class... More, class F>
  requires(std::is_function_v<Sig> && (std::is_function_v<More> && ...))
auto colocated_python(const std::string& name, F f) {
  std::size_t k = 0;
  auto one = [&]<class S>(std::type_identity<S>) {
    const auto registered_as = name + "#" + std::to_string(k++);
    detail::register_function(registered_as, detail::erased_function<S, F>{f}, typeid(S));
    return colocated_function<S>::registered(registered_as);
  };
  // Braces: the signatures register in the order given.
  return colocated_overloads<Sig, More...>{one(std::type_identity<Sig>{}), one(std::type_identity<More>{})...};
}

} // namespace am

#endif // ACTORMESH_COLOCATED_FUNCTION_HPP
