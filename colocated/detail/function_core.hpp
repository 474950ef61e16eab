/// The untyped core of a colocated function or method: its target (a name), its specialization,
/// and the output specs learned per input signature. The typed wrappers of colocated/function.hpp
/// flatten their arguments and call it; it checks the call, picks the devices, and sends the work
/// to the host side in the caller's lane. What it sends is only the target's name, the flat inputs,
/// the devices and (asynchronously) the promised output specs: a call for another process's devices
/// (single-controller mode, not built yet) would send the same to that process's host at the point
/// where this one calls host_call / submit_host_task, and that host would call run_on_host.
#ifndef ACTORMESH_COLOCATED_DETAIL_FUNCTION_CORE_HPP
#define ACTORMESH_COLOCATED_DETAIL_FUNCTION_CORE_HPP

#include "actormesh/actors/future.hpp"
#include "actormesh/colocated/detail/flat_tree.hpp"
#include "actormesh/colocated/detail/host_side.hpp"
#include "actormesh/colocated/specialization.hpp"
#include "actormesh/colocated/specs.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace am::detail {

class function_core {
public:
  /// A core running `target` under `spec`.
  function_core(call_target target, specialization spec);

  /// A new core with `more` added to this one's specialization (and a cache of its own).
  std::shared_ptr<const function_core> specialized(const specialization& more) const;

  /// One call. Output specs known (from out_specs_fn or an earlier call with the same input
  /// signature): returns at once with arrays resolved when the body has run. Otherwise runs the
  /// body, waits for it, learns the output specs and returns its results.
  flat_tree call(const flat_tree& inputs) const;

  /// One call of a function returning nothing: always asynchronous; the future reports when the
  /// body has run (or its error).
  future<void> call_void(const flat_tree& inputs) const;

  /// The name of what it runs.
  const std::string& name() const noexcept { return target_.name; }

  /// The number of input signatures whose output specs are known.
  std::size_t known_signatures() const;

private:
  struct signature_entry {
    std::mutex mutex;              // held while the first call of the signature learns its specs
    std::optional<spec_tree> out;  // the output specs, once known
  };

  /// Checks the inputs against the specialization and returns the devices the call runs on.
  std::vector<device> check_call(const spec_tree& in_specs, const flat_tree& inputs) const;
  std::shared_ptr<signature_entry> entry_for(const spec_tree& in_specs) const;
  flat_tree call_async(const flat_tree& inputs, const std::vector<device>& devices, const spec_tree& out) const;

  call_target target_;
  specialization spec_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::shared_ptr<signature_entry>> signatures_;
  struct recent_signature {
    spec_tree specs;
    std::shared_ptr<signature_entry> entry;
  };
  static constexpr std::size_t max_recent = 8;
  mutable std::vector<recent_signature> recent_; // the signatures looked up last, found without their key
};

} // namespace am::detail

#endif // ACTORMESH_COLOCATED_DETAIL_FUNCTION_CORE_HPP
