/// A free TCP port on 127.0.0.1 for a coordinator that is started later (actormesh launch, the
/// stress command's workers, the integration tests), chosen outside the kernel's ephemeral range:
/// a port found by binding port 0 comes from that range, which every bind(0) listener (actor
/// gateways, collectives) and every outgoing connection's local end also draw from, so between
/// the choice and the coordinator's own bind another process could take it (seen: a launched
/// process joined another test's cluster). Internal.
#pragma once

namespace am::detail {

/// A port of 127.0.0.1 that could be bound just now, drawn at random below the ephemeral range
/// (/proc/sys/net/ipv4/ip_local_port_range; from 10000 up), or one the kernel gives when none of
/// 200 draws binds. Throws am::runtime_error when no socket can be bound at all.
int free_loopback_port();

/// Binds a TCP socket to 127.0.0.1:`port` (SO_REUSEADDR) and closes it: the port bound, or -1
/// with errno set when the bind failed (`port` 0: one the kernel chooses).
int bind_loopback_once(int port);

} // namespace am::detail
