# Sanitizer builds, chosen with -DAM_SANITIZE=address|thread (see doc/testing.md).
# Both compile everything at -O1 with line tables only (these options come after the build type's
# -O2 -g, and GCC takes the last): what a sanitizer build is for is its reports, which keep file and
# line, and most of its compile time went to optimizing and describing instrumented code.
# -Wmaybe-uninitialized is off in these builds only: GCC's flow analysis runs over instrumented code
# there, and GCC 12 at -O1 with ASan reports libstdc++'s own std::function inside std::regex
# (reached through Catch) as maybe uninitialized. The plain build keeps the warning for all code.
if(AM_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -O1 -g1 -Wno-maybe-uninitialized)
  add_link_options(-fsanitize=address,undefined)
elseif(AM_SANITIZE STREQUAL "thread")
  # Debian's CAF is not built with TSan; point CAF_ROOT at a TSan build (tools/build-caf-tsan.sh).
  # GCC 12 warns (-Wtsan) at every std::atomic_thread_fence that TSan does not model fences. The
  # only ones here are Boost.Asio's fenced blocks, reached through CAF's headers
  # (cluster/join.hpp); our own code uses no standalone fence.
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer -O1 -g1 -Wno-maybe-uninitialized -Wno-tsan)
  add_link_options(-fsanitize=thread)
  if(NOT CAF_ROOT AND NOT DEFINED ENV{CAF_ROOT})
    message(WARNING "AM_SANITIZE=thread without CAF_ROOT: Debian's CAF is not instrumented and TSan will "
                    "report false races inside it. Build one with tools/build-caf-tsan.sh.")
  endif()
elseif(NOT AM_SANITIZE STREQUAL "")
  message(FATAL_ERROR "AM_SANITIZE must be '', 'address' or 'thread', not '${AM_SANITIZE}'")
endif()
