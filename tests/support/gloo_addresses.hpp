// The ports in a rank's Gloo addresses as gloo_store publishes them (hex of one tcp::Address per
// other rank: a sockaddr_storage, then a sequence number): where a forming communicator's pair
// listeners wait, for the tests that attack them.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <cstring>
#include <string>
#include <vector>

namespace am::testing {

inline std::vector<int> gloo_pair_ports(const std::string& hex) {
  constexpr std::size_t address_size = sizeof(sockaddr_storage) + sizeof(ssize_t);
  std::string bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  std::vector<int> ports;
  for (std::size_t at = 0; at + address_size <= bytes.size(); at += address_size) {
    sockaddr_storage ss{};
    std::memcpy(&ss, bytes.data() + at, sizeof ss);
    ports.push_back(ntohs(reinterpret_cast<const sockaddr_in*>(&ss)->sin_port));
  }
  return ports;
}

} // namespace am::testing
