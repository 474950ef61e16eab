#include "multihost/detail/npy.hpp"

#include "actormesh/actors/errors.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace am::detail {

namespace {

std::string shape_tuple(const host_array::shape_type& shape) {
  std::string out = "(";
  for (std::size_t k = 0; k < shape.size(); ++k)
    out += (k ? ", " : "") + std::to_string(shape[k]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

[[noreturn]] void io_error(const std::string& what, const std::string& path) {
  throw runtime_error(what + " " + path + ": " + std::strerror(errno));
}

void write_all(int fd, const void* data, std::size_t n, const std::string& path) {
  auto* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      ::close(fd);
      io_error("Cannot write", path);
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void read_all(int fd, void* data, std::size_t n, const std::string& path) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      ::close(fd);
      if (r == 0)
        throw value_error("The checkpoint file " + path + " is truncated");
      io_error("Cannot read", path);
    }
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}

} // namespace

std::string npy_descr(am::dtype type) {
  switch (type) {
    case dtype::bool_: return "|b1";
    case dtype::uint8: return "|u1";
    case dtype::int32: return "<i4";
    case dtype::int64: return "<i8";
    case dtype::float16: return "<f2";
    case dtype::bfloat16: return "<V2";
    case dtype::float32: return "<f4";
    case dtype::float64: return "<f8";
  }
  return "?";
}

std::string npy_header(am::dtype type, const host_array::shape_type& shape) {
  std::string dict = "{'descr': '" + npy_descr(type) + "', 'fortran_order': False, 'shape': " + shape_tuple(shape)
                     + ", }";
  // numpy leaves room to grow the first dimension in place (GROWTH_AXIS_MAX_DIGITS = 21).
  if (!shape.empty())
    dict.append(21 - std::to_string(shape[0]).size(), ' ');
  const std::size_t fixed = 10; // magic (6), version (2), header length (2)
  std::size_t total = fixed + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xFF);
  out += static_cast<char>((dict.size() >> 8) & 0xFF);
  return out + dict;
}

void write_npy(const std::string& path, const host_array& a) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    io_error("Cannot create", tmp);
  const std::string header = npy_header(a.dtype(), a.shape());
  write_all(fd, header.data(), header.size(), tmp);
  write_all(fd, a.bytes().data(), a.nbytes(), tmp);
  if (::close(fd) != 0)
    io_error("Cannot close", tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    io_error("Cannot rename into", path);
}

void read_npy_into(const std::string& path, am::dtype type, const host_array::shape_type& shape,
                   std::byte* destination, std::size_t size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      throw value_error("The checkpoint file " + path + " is missing");
    io_error("Cannot open", path);
  }
  const std::string want = npy_header(type, shape);
  std::string got(want.size(), '\0');
  read_all(fd, got.data(), got.size(), path);
  if (got != want) {
    ::close(fd);
    throw value_error("The checkpoint file " + path + " does not hold " + std::string(am::name(type)) + shape_tuple(shape)
                      + " as .npy");
  }
  read_all(fd, destination, size, path);
  char extra;
  ssize_t more = ::read(fd, &extra, 1);
  ::close(fd);
  if (more != 0)
    throw value_error("The checkpoint file " + path + " is longer than its header says");
}

host_array read_npy(const std::string& path, am::dtype type, const host_array::shape_type& shape) {
  host_array out = host_array::empty(shape, type);
  read_npy_into(path, type, shape, out.bytes().data(), out.nbytes());
  return out;
}

} // namespace am::detail
