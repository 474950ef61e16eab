/// Gloo's TCP transport with authenticated pairs (authenticated_pair.hpp): a device whose
/// contexts make pairs that prove they belong to the communicator before a byte of Gloo's counts.
/// Internal: only gloo_engine includes it.
#pragma once

#include <gloo/transport/tcp/attr.h>
#include <gloo/transport/tcp/device.h>

#include <memory>
#include <string>

namespace am::detail {

/// What a communicator's pairs prove: keys derived from the cluster's secret (possibly empty),
/// the communicator's store prefix and a nonce its rank 0 drew for this creation.
struct pair_keys {
  std::string secret;
  std::string communicator;
  std::string nonce;

  /// The key of the pair between `listener` and `connector` (ranks): 32 bytes of HMAC-SHA256,
  /// different for every pair, communicator and creation.
  std::string key(int listener, int connector) const;
};

/// A Gloo TCP device bound to `attr` (resolved with gloo::transport::tcp::CreateDeviceAttr) whose
/// pairs are authenticated_pair under `keys`.
std::shared_ptr<gloo::transport::Device> make_authenticated_device(const gloo::transport::tcp::attr& attr,
                                                                   pair_keys keys);

} // namespace am::detail
