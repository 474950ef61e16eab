// Certificates for the mutual-TLS tests, made with the openssl command line into a temporary folder
// that is removed with the object: a CA and node certificates it signs, and a second, unrelated
// ("rogue") CA with a certificate of its own. EC P-256 keys (fast to make on a loaded machine).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include <unistd.h>

namespace am::testing {

/// Where one identity's files are.
struct tls_identity {
  std::string certificate; ///< PEM certificate
  std::string key;         ///< PEM private key (unencrypted)
  std::string ca;          ///< the CA file it trusts

  /// The AM_TLS_* variables that make a runtime use this identity.
  std::map<std::string, std::string> env() const {
    return {{"AM_TLS_CERTIFICATE", certificate}, {"AM_TLS_KEY", key}, {"AM_TLS_CA", ca}};
  }
};

/// Whether the openssl command line tool can be run here.
inline bool openssl_available() {
  return std::system("openssl version >/dev/null 2>&1") == 0;
}

/// A CA with `nodes` node certificates, and an unrelated CA with one certificate ("rogue").
class tls_certificates {
public:
  explicit tls_certificates(int nodes) {
    char tmpl[] = "/tmp/am_tls_test_XXXXXX";
    if (!::mkdtemp(tmpl))
      throw std::runtime_error("cannot create a temporary folder for certificates");
    dir_ = tmpl;
    try {
      write(dir_ + "/node.ext", "basicConstraints=critical,CA:FALSE\n"
                                "keyUsage=critical,digitalSignature,keyEncipherment\n"
                                "extendedKeyUsage=serverAuth,clientAuth\n"
                                "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
      make_ca("ca", "actormesh test CA");
      make_ca("rogue_ca", "unrelated test CA");
      for (int k = 0; k < nodes; ++k)
        make_node("node" + std::to_string(k), "ca", "actormesh node " + std::to_string(k));
      make_node("rogue", "rogue_ca", "actormesh node 1"); // same name as a real node: only the CA differs
    } catch (...) {
      std::filesystem::remove_all(dir_);
      throw;
    }
  }
  tls_certificates(const tls_certificates&) = delete;
  tls_certificates& operator=(const tls_certificates&) = delete;
  ~tls_certificates() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  const std::string& folder() const { return dir_; }
  std::string ca_file() const { return dir_ + "/ca.pem"; }
  std::string rogue_ca_file() const { return dir_ + "/rogue_ca.pem"; }

  /// Node `k`'s certificate, signed by the CA, trusting the CA.
  tls_identity node(int k) const {
    auto base = dir_ + "/node" + std::to_string(k);
    return {base + ".pem", base + ".key", ca_file()};
  }

  /// The unrelated CA's certificate; trusting `trusted_ca` (the rogue CA by default; the real CA
  /// makes an intruder that accepts the coordinator, so that only the coordinator's check can stop it).
  tls_identity rogue(const std::string& trusted_ca = {}) const {
    return {dir_ + "/rogue.pem", dir_ + "/rogue.key", trusted_ca.empty() ? rogue_ca_file() : trusted_ca};
  }

private:
  static void write(const std::string& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
    if (!out)
      throw std::runtime_error("cannot write " + path);
  }

  void run(const std::string& command) const {
    auto log = dir_ + "/openssl.log";
    auto full = command + " >>'" + log + "' 2>&1";
    if (std::system(full.c_str()) != 0) {
      std::ifstream in(log);
      std::stringstream text;
      text << in.rdbuf();
      throw std::runtime_error("openssl failed: " + command + "\n" + text.str());
    }
  }

  void make_ca(const std::string& name, const std::string& subject) const {
    auto base = "'" + dir_ + "/" + name;
    run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj '/CN=" + subject
        + "' -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign -keyout "
        + base + ".key' -out " + base + ".pem'");
  }

  void make_node(const std::string& name, const std::string& ca, const std::string& subject) const {
    auto base = "'" + dir_ + "/" + name;
    auto ca_base = "'" + dir_ + "/" + ca;
    run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj '/CN=" + subject + "' -keyout "
        + base + ".key' -out " + base + ".csr'");
    run("openssl x509 -req -days 2 -in " + base + ".csr' -CA " + ca_base + ".pem' -CAkey " + ca_base
        + ".key' -CAcreateserial -extfile '" + dir_ + "/node.ext' -out " + base + ".pem'");
  }

  std::string dir_;
};

} // namespace am::testing
