# Uses ccache as the compiler launcher when it is installed and the user chose no launcher.
# The cache is keyed on paths relative to the source tree (CCACHE_BASEDIR) and ignores the
# build folder's own path (CCACHE_NOHASHDIR), so a clean clone in another folder hits the
# objects an earlier clone of the same commit compiled. AM_CCACHE=OFF turns it off.
option(AM_CCACHE "Compile through ccache when it is installed" ON)
if(AM_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(AM_CCACHE_PROGRAM ccache)
  if(AM_CCACHE_PROGRAM)
    set(am_ccache_launcher ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}
        CCACHE_NOHASHDIR=true CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
        ${AM_CCACHE_PROGRAM})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${am_ccache_launcher})
    set(CMAKE_C_COMPILER_LAUNCHER ${am_ccache_launcher})
    set(CMAKE_CUDA_COMPILER_LAUNCHER ${am_ccache_launcher})
    message(STATUS "actormesh: compiling through ${AM_CCACHE_PROGRAM}")
  endif()
endif()
