#include "cluster/rendezvous_text.hpp"

#include "cluster/membership.hpp"

namespace am::detail {

std::string not_arrived_text(const std::string& what, std::int64_t timeout_ms, const std::vector<int>& missing,
                             int waiter) {
  const bool one = missing.size() == 1;
  return what + " timed out after " + std::to_string(timeout_ms) + " ms: process" + (one ? " " : "es ")
         + join_list(missing) + (one ? " has" : " have") + " not arrived (process " + std::to_string(waiter)
         + " waited that long)";
}

std::string desync_text(const std::string& what, const std::vector<std::pair<int, std::string>>& issued) {
  std::string text = what + " differs between processes (desync):";
  for (auto& [process, signature] : issued)
    text += " process " + std::to_string(process) + " issued " + signature + ";";
  text.pop_back();
  return text;
}

} // namespace am::detail
