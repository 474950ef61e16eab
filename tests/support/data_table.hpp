// Reading the generated tables of tests/data/ (one record a line, fields separated by spaces, '#'
// starting a comment line), shared by the tests that compare against JAX's outputs.
#pragma once

#include "actormesh/actors/dtype.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include "support/build_paths.hpp"

namespace am::testing {

/// One line of a table, split into fields.
using table_record = std::vector<std::string>;

/// The records of tests/data/`file`; fails the test when the file cannot be read.
inline std::vector<table_record> read_data_table(const std::string& file) {
  const std::string path = am::testing::source_dir() + "/tests/data/" + file;
  std::ifstream in(path);
  REQUIRE(in.good());
  std::vector<table_record> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream fields(line);
    table_record r;
    for (std::string f; fields >> f;)
      r.push_back(f);
    out.push_back(std::move(r));
  }
  return out;
}

/// The dtype a table names by its numpy name (`bool`, `float32`, ...); fails the test for others.
inline dtype dtype_named(const std::string& s) {
  for (std::size_t i = 0; i < dtype_count; ++i)
    if (name(static_cast<dtype>(i)) == s)
      return static_cast<dtype>(i);
  FAIL("no actormesh dtype " << s);
  return dtype::bool_;
}

} // namespace am::testing
