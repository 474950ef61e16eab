// The one Catch2 main shared by every test executable.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#if defined(__SANITIZE_ADDRESS__)
/// The ASan+UBSan build's test programs run with `intercept_tls_get_addr=0` (ASAN_OPTIONS still
/// overrides it). GCC 12's LeakSanitizer records the dynamic TLS blocks of dlopen'ed libraries
/// through __tls_get_addr, and with UCX (opened at run time, devices/collectives/ucx_library.cpp)
/// it kept a stale block for the main thread: its tracer then read "DTLS 12 at
/// 0x5d8-0x24000016da" at exit and died with signal 11 after every assertion had passed (1 of 3
/// runs of the shared-memory tests beside the soak tests; 0 of 4 with the option). Our own TLS is
/// static (libraries linked at start), so LSan still scans it.
extern "C" const char* __asan_default_options() { return "intercept_tls_get_addr=0"; }
#endif
