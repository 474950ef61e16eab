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

# The installed headers are exactly the public surface: actormesh.hpp and every header it reaches
# through its quoted includes, found here by following them (am_public_headers below), so nothing
# internal is installed and nothing a public header needs is left out (tests/doc_snippets compiles
# each installed header alone against that tree). A public header names the others it includes as
# "actormesh/<floor>/<file>" (the build tree finds them through the links made in CMakeLists.txt);
# they install as include/actormesh/<floor>/<file>, the umbrella as include/actormesh.hpp, so a user
# writes <actormesh.hpp> or <actormesh/sharding/mesh.hpp>. They are component `headers`:
# `cmake --install build --component headers` puts only them, with nothing built.

# The file behind an include name of the public surface ("actormesh.hpp", "actormesh/<path>"), in <out>.
function(am_public_header_file out name)
  string(REGEX REPLACE "^actormesh/" "" _in_tree "${name}")
  if(EXISTS ${PROJECT_SOURCE_DIR}/${_in_tree})
    set(${out} ${PROJECT_SOURCE_DIR}/${_in_tree} PARENT_SCOPE)
  elseif(EXISTS ${PROJECT_BINARY_DIR}/generated/${name})
    set(${out} ${PROJECT_BINARY_DIR}/generated/${name} PARENT_SCOPE)
  else()
    message(FATAL_ERROR "actormesh: the public header ${name} is not in the tree")
  endif()
endfunction()

# The include names `root` reaches through `#include "..."` lines (itself included), in <out>.
function(am_public_headers out root)
  set(_queue ${root})
  set(_seen)
  while(_queue)
    list(POP_FRONT _queue _header)
    if(_header IN_LIST _seen)
      continue()
    endif()
    list(APPEND _seen ${_header})
    am_public_header_file(_path ${_header})
    file(STRINGS ${_path} _lines REGEX [=[^ *# *include +"]=])
    foreach(_line IN LISTS _lines)
      string(REGEX REPLACE [=[^ *# *include +"([^"]+)".*$]=] [=[\1]=] _included "${_line}")
      list(APPEND _queue ${_included})
    endforeach()
  endwhile()
  set(${out} ${_seen} PARENT_SCOPE)
endfunction()

am_public_headers(_public actormesh.hpp)
foreach(_header IN LISTS _public)
  am_public_header_file(_path ${_header})
  get_filename_component(_folder ${_header} DIRECTORY)
  install(FILES ${_path} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${_folder} COMPONENT headers)
endforeach()
list(LENGTH _public _public_count)
message(STATUS "actormesh: ${_public_count} public headers (actormesh.hpp and what it includes) to install")

set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/actormesh)
install(EXPORT actormeshTargets NAMESPACE actormesh:: DESTINATION ${_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/actormeshConfig.cmake.in
  ${PROJECT_BINARY_DIR}/actormeshConfig.cmake INSTALL_DESTINATION ${_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/actormeshConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/actormeshConfig.cmake ${PROJECT_BINARY_DIR}/actormeshConfigVersion.cmake
        DESTINATION ${_cmake_dir})
