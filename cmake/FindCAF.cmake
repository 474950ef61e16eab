# FindCAF: locates the C++ Actor Framework 0.17 (Debian ships no CMake config for it).
#
#   find_package(CAF REQUIRED COMPONENTS core io openssl)
#
# Creates imported targets CAF::core, CAF::io, CAF::openssl and sets CAF_VERSION.
# Set CAF_ROOT to prefer another installation (for example a ThreadSanitizer build of CAF).

set(_caf_hints)
if(CAF_ROOT)
  list(APPEND _caf_hints ${CAF_ROOT})
endif()
if(DEFINED ENV{CAF_ROOT})
  list(APPEND _caf_hints $ENV{CAF_ROOT})
endif()

if(NOT CAF_FIND_COMPONENTS)
  set(CAF_FIND_COMPONENTS core)
endif()
# Search again when CAF_ROOT changes (the results are cached), and never fall back to the system CAF
# when CAF_ROOT is set: a missing or partial CAF_ROOT must fail, not mix in Debian's libraries.
if(NOT "${_caf_hints}" STREQUAL "${_CAF_SEARCHED_HINTS}")
  unset(CAF_INCLUDE_DIR CACHE)
  foreach(_comp IN LISTS CAF_FIND_COMPONENTS)
    unset(CAF_${_comp}_LIBRARY CACHE)
  endforeach()
  set(_CAF_SEARCHED_HINTS "${_caf_hints}" CACHE INTERNAL "CAF_ROOT used for the cached CAF search")
endif()
if(_caf_hints)
  find_path(CAF_INCLUDE_DIR caf/config.hpp HINTS ${_caf_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)
else()
  find_path(CAF_INCLUDE_DIR caf/config.hpp)
endif()

if(CAF_INCLUDE_DIR AND EXISTS "${CAF_INCLUDE_DIR}/caf/config.hpp")
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_version_line
       REGEX "^#define CAF_VERSION [0-9]+")
  string(REGEX REPLACE "^#define CAF_VERSION ([0-9]+).*" "\\1" _caf_v "${_caf_version_line}")
  math(EXPR _caf_major "${_caf_v} / 10000")
  math(EXPR _caf_minor "(${_caf_v} / 100) % 100")
  math(EXPR _caf_patch "${_caf_v} % 100")
  set(CAF_VERSION "${_caf_major}.${_caf_minor}.${_caf_patch}")
endif()

foreach(_comp IN LISTS CAF_FIND_COMPONENTS)
  if(_caf_hints)
    find_library(CAF_${_comp}_LIBRARY NAMES caf_${_comp}
                 HINTS ${_caf_hints} PATH_SUFFIXES lib lib64 NO_DEFAULT_PATH)
  else()
    find_library(CAF_${_comp}_LIBRARY NAMES caf_${_comp})
  endif()
  if(CAF_${_comp}_LIBRARY)
    set(CAF_${_comp}_FOUND TRUE)
    if(NOT TARGET CAF::${_comp})
      add_library(CAF::${_comp} UNKNOWN IMPORTED)
      set_target_properties(CAF::${_comp} PROPERTIES
        IMPORTED_LOCATION "${CAF_${_comp}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}")
    endif()
  endif()
endforeach()

if(TARGET CAF::io AND TARGET CAF::core)
  set_property(TARGET CAF::io APPEND PROPERTY INTERFACE_LINK_LIBRARIES CAF::core)
endif()
if(TARGET CAF::openssl AND TARGET CAF::io)
  set_property(TARGET CAF::openssl APPEND PROPERTY INTERFACE_LINK_LIBRARIES CAF::io)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF
  REQUIRED_VARS CAF_INCLUDE_DIR
  VERSION_VAR CAF_VERSION
  HANDLE_COMPONENTS)
