# Unity builds for the targets with many files (the library, the command-line tool), chosen with
# AM_UNITY_BUILD (on by default; doc/testing.md has the measured times).
option(AM_UNITY_BUILD "Compile the library's and the tool's files in batches (unity build)" ON)
set(AM_UNITY_BATCH_SIZE 8 CACHE STRING "Files per batch when AM_UNITY_BUILD is ON")

# am_compile_in_batches(<target>)
# Compiles <target>'s files AM_UNITY_BATCH_SIZE at a time, one translation unit per batch, so the
# headers they share are parsed once a batch instead of once a file. Files with options of their
# own (the AVX-512 kernels) still compile alone. With AM_UNITY_BUILD=OFF every file compiles on its
# own, as CI's TSan stage builds them, which catches a file that leans on a neighbour's includes.
function(am_compile_in_batches target)
  if(NOT AM_UNITY_BUILD)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${AM_UNITY_BATCH_SIZE})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC takes every file of a batch after the first for an included header and warns when a type
    # there holds a type from that file's anonymous namespace; in a .cpp file that is what the
    # anonymous namespace is for, so the warning says nothing about the code.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
  endif()
endfunction()
