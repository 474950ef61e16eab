#include "devices/collectives/agreements.hpp"

#include "actors/detail/fnv1a.hpp"
#include "actormesh/devices/collectives/communicator.hpp"
#include "devices/detail/runtime_impl.hpp"

#include <map>
#include <memory>
#include <mutex>

namespace am::detail {

namespace {

/// One sequence: its communicator while it works, how many it has made, and its calls so far.
struct agreement_sequence {
  std::mutex mutex; ///< one call at a time: the communicator's steps follow the order of arrival
  std::unique_ptr<communicator> comm;
  int made = 0;
  std::uint64_t calls = 0;
};

/// The runtime's sequences by name.
struct agreement_sequences {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<agreement_sequence>> by_name;
};

const service_key<agreement_sequences> agreements_key{"agreements"};

/// The communicator's name for generation `made` of `sequence`: the same in every process,
/// at most 200 characters, without '/'.
std::string communicator_name_of(const std::string& sequence, int made) {
  fnv1a64 h;
  h.add_text(sequence);
  return "am.agree." + h.hex() + "." + std::to_string(made);
}

} // namespace

void agree_across(runtime_context& context, const std::string& sequence, const std::vector<int>& processes,
                  const std::string& signature, std::chrono::milliseconds timeout) {
  auto& rt = impl_of(context);
  auto sequences = rt.service(agreements_key, [] { return std::make_shared<agreement_sequences>(); });
  agreement_sequence* seq = nullptr;
  {
    std::lock_guard<std::mutex> guard(sequences->mutex);
    auto& slot = sequences->by_name[sequence];
    if (!slot)
      slot = std::make_unique<agreement_sequence>();
    seq = slot.get();
  }
  std::lock_guard<std::mutex> one_at_a_time(seq->mutex);
  const std::string label = sequence + ", call " + std::to_string(seq->calls++);
  if (seq->comm && seq->comm->broken())
    seq->comm.reset();
  if (!seq->comm)
    seq->comm = std::make_unique<communicator>(rt.cluster(), processes, communicator_name_of(sequence, ++seq->made),
                                               rt.data_plane_address(), timeout);
  seq->comm->agree(label, signature, timeout);
}

} // namespace am::detail
