/// Reverse-mode differentiation over the traced graph: the function is recorded into the current
/// trace, then a reverse pass over the nodes it added records each node's vector-Jacobian product
/// (vjp_rules.hpp) into the same trace, so the gradient is part of the same staged plan.
#ifndef ACTORMESH_PARALLEL_DETAIL_AUTODIFF_HPP
#define ACTORMESH_PARALLEL_DETAIL_AUTODIFF_HPP

#include "actormesh/parallel/detail/tracing.hpp"

#include <vector>

namespace am::detail {

/// Inside a trace: {f(args)[0], then d f(args)[0] / d args[k] for each k in argnums}. The output
/// must be a float scalar and the differentiated arguments floats (JAX's errors otherwise).
std::vector<array> value_and_grad_traced(const array_function& f, const std::vector<array>& args,
                                         const std::vector<int>& argnums);

} // namespace am::detail

#endif // ACTORMESH_PARALLEL_DETAIL_AUTODIFF_HPP
