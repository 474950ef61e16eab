/// Colocated classes (jax.experimental.colocated_python.colocated_python_class): a C++ class
/// registered by name whose instances live on the host of the CPU devices their methods are
/// called with, each instance an actor of its own.
///
///     struct adder { explicit adder(int inc); am::array add(const am::array& x); int inc; };
///     const auto adder_class = am::colocated_python_class<adder>("adder").def("add", &adder::add);
///     auto a = adder_class(1);               // records 1; constructs nothing
///     am::array y = a.call(&adder::add, x);  // constructs adder(1) on x's host; checked at compile time
///
/// The string-named form, `a.method<am::array(am::array)>("add")(x)`, stays for code that knows a
/// method by its name only (it checks the signature at run time).
#ifndef ACTORMESH_COLOCATED_OBJECT_HPP
#define ACTORMESH_COLOCATED_OBJECT_HPP

#include "actormesh/colocated/detail/constructor_wire.hpp"
#include "actormesh/colocated/detail/method_pointers.hpp"
#include "actormesh/colocated/detail/object_handle.hpp"
#include "actormesh/colocated/detail/object_record.hpp"
#include "actormesh/colocated/detail/registry.hpp"
#include "actormesh/colocated/detail/signature.hpp"
#include "actormesh/colocated/function.hpp"
#include "actormesh/sharding/detail/array_wire.hpp" // arrays and host arrays travel as constructor arguments

#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace am {

/// A wrapper of a colocated T: records the constructor's arguments; the instance for a set of
/// devices is constructed, on that host, by the first method call with arrays on them, and runs
/// every method call for them in turn (one call at a time: the instance is an actor, so T needs no
/// lock). Copies share the instances. When the last copy (and the last method wrapper taken from
/// it) is gone, each instance is destroyed on its own thread after the calls already issued, and
/// before the next colocated call of the thread that let go returns (JAX's order). A wrapper
/// never called constructs nothing. When T's constructor throws, every
/// method call of that instance fails with that exception.
template <class T>
class colocated_object {
public:
  /// The method registered as `name`, as a colocated function of signature `Sig`
  /// (`R(Args...)`, decayed argument types) whose calls run on this object's instance; it can be
  /// specialized like a function. Throws am::value_error for an unknown method and am::type_error
  /// when it was registered with another signature.
  template <class Sig>
  colocated_function<Sig> method(const std::string& name) const {
    auto entry = detail::find_method(handle_->record()->class_name, name);
    detail::check_signature(entry->signature, typeid(Sig), "method '" + name + "' of colocated class '"
                                                              + handle_->record()->class_name + "'");
    return colocated_function<Sig>(handle_->method_core(name));
  }

  /// The method `pm` (a member function of T given to the class's `def`) as a colocated function
  /// whose signature comes from `pm`: nothing to restate, and a wrong argument fails to compile.
  /// Throws am::value_error when `pm` was not registered for this class.
  template <class M>
  colocated_function<detail::signature_of<M>> method(M pm) const {
    static_assert(std::is_member_function_pointer_v<M>, "method: pass a member function, e.g. &T::add");
    static_assert(std::is_base_of_v<typename detail::member_class<M>::type, T>,
                  "method: the member function is not one of this class's");
    const auto& class_name = handle_->record()->class_name;
    return colocated_function<detail::signature_of<M>>(
      handle_->method_core(detail::method_pointers<M>::name_of(class_name, pm)));
  }

  /// Calls method `pm` with `args` (`obj.call(&adder::add, x)`), as method(pm)(args...) does: the
  /// arguments must convert to the method's parameter types, checked at compile time.
  template <class M, class... A>
    requires(std::is_member_function_pointer_v<M>
             && std::is_invocable_v<const colocated_function<detail::signature_of<M>>&, const A&...>)
  auto call(M pm, const A&... args) const {
    return method(pm)(args...);
  }

  /// Wraps a handle; for the library's own use.
  explicit colocated_object(std::shared_ptr<detail::object_handle> handle) : handle_(std::move(handle)) {}

private:
  std::shared_ptr<detail::object_handle> handle_;
};

/// A colocated class: its registered name and methods; calling it makes an object wrapper.
template <class T>
class colocated_class {
public:
  /// Registers the class name; throws am::value_error when it is taken.
  explicit colocated_class(std::string name) : name_(std::move(name)) { detail::register_class(name_); }

  /// Registers member function `pm` as method `method` (its arguments and result are trees of
  /// am::array, or the result is void); throws am::value_error when the name is taken.
  template <class M>
  colocated_class def(const std::string& method, M pm) const {
    static_assert(std::is_member_function_pointer_v<M>, "def: pass a member function, e.g. &T::add");
    using sig = detail::signature_of<M>;
    detail::register_method(name_, method, erased_method<sig, M>{pm}, typeid(sig));
    detail::method_pointers<M>::add(name_, pm, method); // after the name was accepted
    return *this;
  }

  /// A new object wrapper recording `args` (copied; C strings as std::string, so that nothing
  /// dangles and they can travel) for T's constructor; nothing is constructed.
  template <class... A>
  colocated_object<T> operator()(A&&... args) const {
    static_assert(std::is_constructible_v<T, const detail::recorded_argument<A>&...>,
                  "colocated_class: T cannot be constructed from these arguments (C strings are passed as std::string)");
    auto recorded = std::make_shared<const std::tuple<detail::recorded_argument<A>...>>(std::forward<A>(args)...);
    using travelling = detail::travelling_constructor<T, detail::recorded_argument<A>...>;
    detail::travelling_arguments remote{travelling::key(), {}};
    if constexpr (travelling::can_travel)
      remote.encode = [recorded] { return *std::apply(&travelling::encode, *recorded); };
    detail::instance_factory factory = [recorded] {
      return std::static_pointer_cast<void>(
        std::apply([](const auto&... a) { return std::make_shared<T>(a...); }, *recorded));
    };
    auto record = std::make_shared<const detail::object_record>(name_, std::move(factory), std::move(remote));
    return colocated_object<T>(std::make_shared<detail::object_handle>(std::move(record)));
  }

  /// The registered name.
  const std::string& name() const noexcept { return name_; }

private:
  template <class Sig, class M>
  struct erased_method;

  template <class R, class... Args, class M>
  struct erased_method<R(Args...), M> {
    M pm;
    detail::flat_tree operator()(void* instance, const detail::flat_tree& inputs) const {
      auto args = detail::unflatten_arrays<std::tuple<Args...>>(inputs);
      auto* self = static_cast<T*>(instance);
      auto call = [&](const auto&... a) -> decltype(auto) { return (self->*pm)(a...); };
      if constexpr (std::is_void_v<R>) {
        std::apply(call, args);
        return detail::flat_tree{tree_structure(std::tuple<>{}), {}};
      } else {
        return detail::flatten_arrays(std::apply(call, args));
      }
    }
  };

  std::string name_;
};

/// Registers class T under `name` (in every process of the program, like functions); add its
/// methods with `.def(name, &T::method)`.
template <class T>
colocated_class<T> colocated_python_class(std::string name) {
  return colocated_class<T>(std::move(name));
}

} // namespace am

#endif // ACTORMESH_COLOCATED_OBJECT_HPP
