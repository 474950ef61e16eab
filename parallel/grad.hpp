/// grad and value_and_grad (jax.grad, jax.value_and_grad): reverse-mode derivatives of a function
/// of arrays returning a float scalar. The function is traced, and the reverse pass is recorded
/// after it as more operations, so a call is one staged plan, cached per input signature like jit.
/// Composes with jit (either way round), vmap and pmap; inside pmap the derivative of a collective
/// is a collective (psum's is psum).
///
///     auto loss = [](const am::array& w, const am::array& x) { return am::mean(am::square(x * w)); };
///     auto [value, dw] = am::value_and_grad(loss)(w, x);          // d/dw
///     auto [value2, both] = am::value_and_grad(loss, {0, 1})(w, x); // both[0] = d/dw, both[1] = d/dx
#ifndef ACTORMESH_PARALLEL_GRAD_HPP
#define ACTORMESH_PARALLEL_GRAD_HPP

#include "actormesh/parallel/detail/autodiff.hpp"
#include "actormesh/sharding/detail/array_arguments.hpp"
#include "actormesh/sharding/jit.hpp"

#include <memory>
#include <utility>
#include <vector>

namespace am {

/// A differentiated function. With `Many`, the gradients come as a std::vector (one per argnum).
template <class F, bool WithValue, bool Many>
class differentiated {
public:
  /// Differentiates `f` with respect to the arguments `argnums`.
  differentiated(F f, std::vector<int> argnums)
    : f_(std::move(f)), argnums_(std::move(argnums)), cache_(std::make_shared<detail::plan_cache>("grad")) {}

  /// The gradient (with the value first for value_and_grad) at these arguments: arrays, host
  /// arrays or scalars (see jitted; an integer scalar is int32, which grad refuses as JAX does).
  template <class... Args>
    requires(detail::array_argument<Args> && ...)
  auto operator()(const Args&... args) const {
    std::vector<array> inputs{detail::device_argument(args)...};
    auto out = cache_->call(inputs, [this](const std::vector<array>& tracers) {
      detail::array_function fn = [this](const std::vector<array>& a) {
        return call_with(a, std::index_sequence_for<Args...>{});
      };
      return detail::value_and_grad_traced(fn, tracers, argnums_);
    });
    auto value = out.front();
    std::vector<array> grads(out.begin() + 1, out.end());
    if constexpr (WithValue) {
      if constexpr (Many)
        return std::make_pair(value, std::move(grads));
      else
        return std::make_pair(value, grads.front());
    } else {
      if constexpr (Many)
        return grads;
      else
        return grads.front();
    }
  }

private:
  template <std::size_t... I>
  std::vector<array> call_with(const std::vector<array>& a, std::index_sequence<I...>) const {
    return detail::flatten_result(f_(a[I]...));
  }

  F f_;
  std::vector<int> argnums_;
  std::shared_ptr<detail::plan_cache> cache_;
};

/// The gradient of `f` with respect to argument `argnum` (an array like that argument).
template <class F>
differentiated<F, false, false> grad(F f, int argnum = 0) {
  return {std::move(f), {argnum}};
}

/// The gradients with respect to several arguments (a std::vector, in argnums order).
template <class F>
differentiated<F, false, true> grad(F f, std::vector<int> argnums) {
  return {std::move(f), std::move(argnums)};
}

/// The value of `f` and its gradient with respect to `argnum`, as a std::pair.
template <class F>
differentiated<F, true, false> value_and_grad(F f, int argnum = 0) {
  return {std::move(f), {argnum}};
}

/// The value and the gradients with respect to several arguments.
template <class F>
differentiated<F, true, true> value_and_grad(F f, std::vector<int> argnums) {
  return {std::move(f), std::move(argnums)};
}

} // namespace am

#endif // ACTORMESH_PARALLEL_GRAD_HPP
