#include "parallel/detail/pmap_agreement.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/collectives/agreements.hpp"
#include "devices/runtime_context.hpp"

#include <set>

namespace am::detail {

namespace {

std::string axes_text(const axis_specs& axes) {
  std::string out = "(";
  for (std::size_t k = 0; k < axes.size(); ++k)
    out += (k ? ", " : "") + (axes[k].axis ? std::to_string(*axes[k].axis) : std::string("None"));
  return out + ")";
}

/// The text every process must issue alike for one call (see the header).
std::string pmap_signature(const std::string& axis_name, const std::vector<int>& ids, const axis_specs& in_axes,
                           const axis_specs& out_axes, const std::vector<array>& args) {
  std::string out = "pmap(axis_name='" + axis_name + "', devices [";
  for (std::size_t k = 0; k < ids.size(); ++k)
    out += (k ? ", " : "") + std::to_string(ids[k]);
  out += "], in_axes " + axes_text(in_axes) + ", out_axes " + axes_text(out_axes) + ") of (";
  for (std::size_t k = 0; k < args.size(); ++k)
    out += (k ? ", " : "") + args[k].aval_string();
  return out + ")";
}

} // namespace

void check_pmap_agreement(const std::string& axis_name, const std::vector<device>& devices, const axis_specs& in_axes,
                          const axis_specs& out_axes, const std::vector<array>& args) {
  auto rt = current_context();
  if (rt->drives_every_device())
    return; // this process is the only caller (single-controller, or one process)
  std::set<int> owners;
  std::vector<int> ids;
  for (auto& d : devices) {
    owners.insert(d.process_index);
    ids.push_back(d.id);
  }
  const int me = rt->config().process_id;
  if (owners.size() < 2 || !owners.count(me))
    return;
  std::vector<int> processes(owners.begin(), owners.end());
  // One sequence per device list, as the stages have: threads mapping different devices at once
  // need no order between them. Its name is the same in every process, and names the call in errors.
  std::string sequence = "pmap over devices [";
  for (std::size_t k = 0; k < ids.size(); ++k)
    sequence += (k ? ", " : "") + std::to_string(ids[k]);
  sequence += "]";
  agree_across(*rt, sequence, processes, pmap_signature(axis_name, ids, in_axes, out_axes, args),
               rt->config().collective_timeout);
}

} // namespace am::detail
