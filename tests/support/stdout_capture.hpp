// What a piece of a test prints on standard output, for tests of printing (am::debug_print).
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <unistd.h>

namespace am::test {

/// Standard output of `f` (fd 1 sent to a temporary file while it runs).
template <class F>
std::string stdout_of(F&& f) {
  std::fflush(stdout);
  char name[] = "/tmp/am_stdout_XXXXXX";
  const int file = ::mkstemp(name);
  REQUIRE(file >= 0);
  const int saved = ::dup(1);
  ::dup2(file, 1);
  f();
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  std::string out;
  if (FILE* in = std::fopen(name, "r")) {
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, in)) > 0;)
      out.append(buf, n);
    std::fclose(in);
  }
  ::close(file);
  ::unlink(name);
  return out;
}

} // namespace am::test
