#include "devices/detail/actor_links.hpp"

#include "actormesh/actors/errors.hpp"
#include "cluster/guard/guarded_connect.hpp"
#include "cluster/guard/guarded_listener.hpp"
#include "devices/detail/runtime_impl.hpp"


namespace am::detail {

published_actor publish_actor(runtime_context& context, const caf::actor& actor) {
  auto& rt = impl_of(context);
  const auto& o = rt.config();
  guard::listener_settings ls;
  ls.address = rt.data_plane_address();
  ls.port = 0;
  ls.secret = o.cluster_token;
  ls.tls = !o.tls_certificate.empty();
  ls.max_frame_bytes = o.max_frame_bytes;
  ls.max_connections = static_cast<std::size_t>(o.max_connections);
  auto listener = std::make_shared<guard::guarded_listener>(rt.system(), actor, ls);
  auto address = ls.address + ":" + std::to_string(listener->port());
  return published_actor{address, std::move(listener)};
}

caf::actor connect_published(runtime_context& context, const std::string& address,
                             std::chrono::steady_clock::time_point deadline) {
  auto& rt = impl_of(context);
  const auto& o = rt.config();
  auto colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size())
    throw value_error("malformed actor address '" + address + "' (want host:port)");
  guard::connect_settings cs;
  cs.host = address.substr(0, colon);
  try {
    auto port = std::stoul(address.substr(colon + 1));
    if (port == 0 || port > 65535)
      throw std::out_of_range("port");
    cs.port = static_cast<std::uint16_t>(port);
  } catch (const std::exception&) {
    throw value_error("malformed actor address '" + address + "' (want host:port)");
  }
  cs.secret = o.cluster_token;
  cs.tls = !o.tls_certificate.empty();
  cs.max_frame_bytes = o.max_frame_bytes;
  auto attempt = guard::guarded_connect_until(rt.system(), cs, deadline);
  if (attempt.found)
    return attempt.found;
  if (attempt.final)
    throw value_error("cannot connect to the actor published at " + address + ": " + attempt.error);
  throw timeout_error("could not reach the actor published at " + address + ": " + attempt.error);
}

} // namespace am::detail
