/// The cluster's shared secret: how a process proves it belongs before the coordinator lets its
/// bytes reach CAF. The secret is text (any bytes but a newline at the end); `actormesh launch`
/// makes one per cluster; users give it as AM_CLUSTER_TOKEN or in a file (AM_CLUSTER_TOKEN_FILE).
/// Proofs are HMAC-SHA256 over both sides' nonces, so the secret itself never travels. Internal.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace am::detail {

/// An HMAC-SHA256 value.
using mac_bytes = std::array<std::uint8_t, 32>;

/// A new secret: 32 random bytes from OpenSSL's generator, as 64 hex digits.
std::string generate_cluster_token();

/// HMAC-SHA256 of `data` under `key`.
mac_bytes hmac_sha256(std::string_view key, std::string_view data);

/// Compares two MACs in time independent of where they differ.
bool equal_macs(const mac_bytes& a, const mac_bytes& b) noexcept;

/// `n` random bytes (OpenSSL's generator); throws am::runtime_error if it fails.
std::string random_bytes(std::size_t n);

/// Reads a secret from a file: its content without one trailing newline. Throws am::value_error
/// naming the file when it cannot be read, is empty, or is over 4 KiB (`what` names the option).
std::string read_cluster_token_file(const std::string& path, const char* what);

/// The secret this process's environment gives (AM_CLUSTER_TOKEN, or the file AM_CLUSTER_TOKEN_FILE
/// names), or "" when it gives none; for tools that are not a runtime (`info --watch`, `launch`).
/// Throws am::value_error when both are set or the file cannot be used.
std::string cluster_token_from_environment();

} // namespace am::detail
