// Works around CAF 0.17.6's OpenSSL session (libcaf_openssl), which never clears OpenSSL's
// per-thread error queue: the error a refused handshake leaves on the middleman's I/O thread makes
// SSL_get_error report SSL_ERROR_SSL for the next SSL_read or SSL_write of a healthy connection
// that merely has to wait for data, and CAF then closes that connection (one garbage connection to
// the coordinator dropped every member). OpenSSL wants the queue empty before each I/O call
// (SSL_get_error(3)). These definitions interpose the four calls CAF's session makes:
// libactormesh comes before libssl in the process's symbol lookup order, so libcaf_openssl's calls
// land here; each clears the queue and calls OpenSSL's own function. Internal.
#include <dlfcn.h>

struct ssl_st;

namespace {

template <class F>
F openssl_function(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

void clear_openssl_errors() {
  using clear_fn = void (*)();
  static const auto clear = reinterpret_cast<clear_fn>(::dlsym(RTLD_DEFAULT, "ERR_clear_error"));
  if (clear)
    clear();
}

} // namespace

extern "C" {

int SSL_read(ssl_st* ssl, void* buf, int num) {
  static const auto real = openssl_function<int (*)(ssl_st*, void*, int)>("SSL_read");
  clear_openssl_errors();
  return real(ssl, buf, num);
}

int SSL_write(ssl_st* ssl, const void* buf, int num) {
  static const auto real = openssl_function<int (*)(ssl_st*, const void*, int)>("SSL_write");
  clear_openssl_errors();
  return real(ssl, buf, num);
}

int SSL_accept(ssl_st* ssl) {
  static const auto real = openssl_function<int (*)(ssl_st*)>("SSL_accept");
  clear_openssl_errors();
  return real(ssl);
}

int SSL_connect(ssl_st* ssl) {
  static const auto real = openssl_function<int (*)(ssl_st*)>("SSL_connect");
  clear_openssl_errors();
  return real(ssl);
}

} // extern "C"
