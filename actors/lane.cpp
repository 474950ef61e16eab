#include "actormesh/actors/lane.hpp"

#include <atomic>
#include <unordered_map>

namespace am {

namespace {
std::atomic<caller_id> next_caller{1};
} // namespace

caller_id this_caller() noexcept {
  thread_local caller_id id = next_caller.fetch_add(1, std::memory_order_relaxed);
  return id;
}

caller_id new_caller_id() noexcept { return next_caller.fetch_add(1, std::memory_order_relaxed); }

std::uint64_t new_receiver_key() noexcept {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

call_header next_call_header(std::uint64_t receiver) noexcept {
  thread_local std::unordered_map<std::uint64_t, std::uint64_t> next_seq;
  return call_header{this_caller(), next_seq[receiver]++};
}

} // namespace am
