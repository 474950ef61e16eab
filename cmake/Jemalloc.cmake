# jemalloc (Debian's libjemalloc-dev) as the allocator of programs that use actormesh.
#
# Every call allocates a little on the caller's thread (future state, message) that a device thread
# frees. With glibc's malloc those cross-thread frees contend for the caller's arena lock; jemalloc
# cut the caller's cost of an 8-shard eager operation several times and raised one-way lane
# throughput (measured: doc/performance.md, "Lanes" and "Sharded arrays and jit"). It is linked
# PUBLIC so that executables list it before libc and it replaces malloc for the whole process.
# Sanitizer builds keep their own allocator. -DAM_JEMALLOC=OFF opts out.
set(AM_HAVE_JEMALLOC OFF)
if(NOT AM_JEMALLOC STREQUAL "OFF" AND AM_SANITIZE STREQUAL "")
  find_library(JEMALLOC_LIBRARY NAMES jemalloc)
  if(JEMALLOC_LIBRARY)
    set(AM_HAVE_JEMALLOC ON)
    message(STATUS "actormesh: jemalloc ${JEMALLOC_LIBRARY}")
  elseif(AM_JEMALLOC STREQUAL "ON")
    message(FATAL_ERROR "AM_JEMALLOC=ON but libjemalloc was not found (apt-get install libjemalloc-dev)")
  endif()
elseif(AM_JEMALLOC STREQUAL "ON" AND NOT AM_SANITIZE STREQUAL "")
  message(FATAL_ERROR "AM_JEMALLOC=ON cannot be combined with AM_SANITIZE (sanitizers replace malloc)")
endif()

# am_link_jemalloc(<target>): make programs linking <target> use jemalloc. In the build tree that is
# this machine's library; the installed package names the target actormesh::jemalloc instead, which
# its config file defines on the consumer's machine (cmake/actormeshConfig.cmake.in: found there,
# or left out when the consumer sets ACTORMESH_JEMALLOC=OFF), so no path of this machine is exported.
function(am_link_jemalloc target)
  if(AM_HAVE_JEMALLOC)
    target_link_libraries(${target} PUBLIC $<BUILD_INTERFACE:${JEMALLOC_LIBRARY}>
                                           $<INSTALL_INTERFACE:actormesh::jemalloc>)
  endif()
endfunction()
