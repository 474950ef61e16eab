# `cmake --install` puts the headers, the library, the tool and a package config, so that an outside
# project does find_package(actormesh) and links actormesh::actormesh.
include(CMakePackageConfigHelpers)

set_target_properties(actormesh PROPERTIES EXPORT_NAME actormesh)
install(TARGETS actormesh EXPORT actormeshTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS actormesh_tool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The installed tool finds the installed library by itself (no LD_LIBRARY_PATH).
set_target_properties(actormesh_tool PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")

# Headers keep their floor folders: <actormesh.hpp> includes "actors/...", "devices/...". They are
# component `headers`: `cmake --install build --component headers` puts only them, with nothing built
# (tests/doc_snippets compiles the docs' code against that tree). The internals of actors/ and
# devices/ (CAF messages, actors, kernels) stay out; sharding/detail/ is installed because the public
# jit template uses its tracing interface (none of it includes CAF), and so are the floors above it
# (multihost/, colocated/), whose templates use their detail/ too.
foreach(_floor actors devices)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_floor}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/actormesh/${_floor}
          COMPONENT headers FILES_MATCHING PATTERN "*.hpp" PATTERN "cuda" EXCLUDE PATTERN "detail" EXCLUDE PATTERN "remote" EXCLUDE)
endforeach()
# One internal header of actors/detail/ the public future.hpp includes: the future state's futex word
# and spin lock (no CAF).
install(FILES ${PROJECT_SOURCE_DIR}/actors/detail/ready_word.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/actormesh/actors/detail COMPONENT headers)
foreach(_floor sharding parallel multihost colocated)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${_floor})
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_floor}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/actormesh/${_floor}
            COMPONENT headers FILES_MATCHING PATTERN "*.hpp")
  endif()
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/actormesh.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/actormesh COMPONENT headers)
# Of observability/, only the public headers: traces (am::trace_scope, start_trace, stop_trace) and
# the live counters (am::runtime_stats).
install(FILES ${PROJECT_SOURCE_DIR}/observability/trace.hpp ${PROJECT_SOURCE_DIR}/observability/runtime_stats.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/actormesh/observability COMPONENT headers)
install(FILES ${PROJECT_BINARY_DIR}/generated/actormesh/build_config.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/actormesh/actormesh COMPONENT headers)

set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/actormesh)
install(EXPORT actormeshTargets NAMESPACE actormesh:: DESTINATION ${_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/actormeshConfig.cmake.in
  ${PROJECT_BINARY_DIR}/actormeshConfig.cmake INSTALL_DESTINATION ${_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/actormeshConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/actormeshConfig.cmake ${PROJECT_BINARY_DIR}/actormeshConfigVersion.cmake
        DESTINATION ${_cmake_dir})
