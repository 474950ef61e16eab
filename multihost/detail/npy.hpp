/// numpy's .npy files (format 1.0): how checkpoint shards are stored, so numpy.load reads them.
/// Internal.
#pragma once

#include "actormesh/sharding/host_array.hpp"

#include <cstddef>
#include <string>

namespace am::detail {

/// numpy's descr of a dtype: '<f4', '|b1', ...; bfloat16 (which numpy lacks) is stored as raw
/// 2-byte voids, '<V2' (ml_dtypes' bfloat16 reads them with .view).
std::string npy_descr(am::dtype type);

/// The header numpy.save writes: magic, version 1.0, length, the dict padded with spaces and a
/// newline to a multiple of 64 bytes.
std::string npy_header(am::dtype type, const host_array::shape_type& shape);

/// Writes `a` as a .npy file: into `path` + ".tmp", then renamed to `path`, so that a partly
/// written file never has the final name. Throws am::runtime_error on an I/O error.
void write_npy(const std::string& path, const host_array& a);

/// Reads a .npy file holding `type` and `shape`; throws am::value_error when the file is not
/// one (a wrong header, another dtype or shape, a truncated body), am::runtime_error when it cannot
/// be read.
host_array read_npy(const std::string& path, am::dtype type, const host_array::shape_type& shape);

/// read_npy into `size` bytes at `destination` (the elements of `shape`; a shard's own memory), with
/// the same checks and errors.
void read_npy_into(const std::string& path, am::dtype type, const host_array::shape_type& shape,
                   std::byte* destination, std::size_t size);

} // namespace am::detail
