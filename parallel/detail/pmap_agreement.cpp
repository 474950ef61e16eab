#include "parallel/detail/pmap_agreement.hpp"

#include "cluster/step_counters.hpp"
#include "actors/errors.hpp"
#include "devices/runtime_context.hpp"
#include "observability/flight_recorder.hpp"

#include <set>

namespace am::detail {

namespace {

/// Each device list's count of pmap calls checked so far.
const service_key<step_counters> pmap_steps{"pmap agreement"};

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
  auto steps = rt->service(pmap_steps, [] { return std::make_shared<step_counters>(); });
  // One sequence per device list, as the stages have: threads mapping different devices at once
  // need no order between them.
  const auto name = communicator_name("am.pmap/", processes) + communicator_name(" devices ", ids);
  const auto signature = pmap_signature(axis_name, ids, in_axes, out_axes, args);
  try {
    rt->cluster().check_collective(name, steps->take(name), processes, signature, rt->config().collective_timeout);
  } catch (const desync_error& e) {
    // As a collective's desync or timeout does: this process's recent collectives go to its flight
    // recorder, and the error says where.
    throw desync_error(e.what() + observability::flight_recorder_note(observability::dump_flight_recorder(me, e.what())));
  } catch (const timeout_error& e) {
    throw timeout_error(e.what() + observability::flight_recorder_note(observability::dump_flight_recorder(me, e.what())));
  }
}

} // namespace am::detail
