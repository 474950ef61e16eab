#include "devices/collectives/authenticated_transport.hpp"

#include "cluster/guard/cluster_secret.hpp"
#include "devices/collectives/authenticated_pair.hpp"

#include <gloo/transport/tcp/context.h>

#include <algorithm>

namespace am::detail {

namespace {

namespace tcp = gloo::transport::tcp;

class authenticated_context final : public tcp::Context {
public:
  authenticated_context(std::shared_ptr<tcp::Device> device, int rank, int size, pair_keys keys)
      : tcp::Context(std::move(device), rank, size), keys_(std::move(keys)) {}

  std::unique_ptr<gloo::transport::Pair>& createPair(int peer) override {
    const int listener = std::min(rank, peer);
    const int connector = std::max(rank, peer);
    pairs_[peer] = std::make_unique<authenticated_pair>(this, device_.get(), rank, peer, getTimeout(),
                                                        keys_.key(listener, connector));
    return pairs_[peer];
  }

private:
  pair_keys keys_;
};

class authenticated_device final : public tcp::Device {
public:
  authenticated_device(const tcp::attr& attr, pair_keys keys) : tcp::Device(attr), keys_(std::move(keys)) {}

  std::shared_ptr<gloo::transport::Context> createContext(int rank, int size) override {
    return std::make_shared<authenticated_context>(shared_from_this(), rank, size, keys_);
  }

private:
  pair_keys keys_;
};

} // namespace

std::string pair_keys::key(int listener, int connector) const {
  std::string data = "actormesh collectives pair v1\n";
  data.append(communicator).append("\n").append(nonce).append("\n");
  data.append(std::to_string(listener)).append(" <- ").append(std::to_string(connector));
  const mac_bytes mac = hmac_sha256(secret, data);
  return std::string(reinterpret_cast<const char*>(mac.data()), mac.size());
}

std::shared_ptr<gloo::transport::Device> make_authenticated_device(const tcp::attr& attr, pair_keys keys) {
  return std::make_shared<authenticated_device>(tcp::CreateDeviceAttr(attr), std::move(keys));
}

} // namespace am::detail
