// `actormesh launch --log-dir`: making the folders and files of one attempt.
#include "tools/launch_logs.hpp"

#include "actormesh/actors/errors.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace am::tools {

namespace {

std::unique_ptr<std::ofstream> open_log(const std::filesystem::path& path) {
  auto file = std::make_unique<std::ofstream>(path, std::ios::out | std::ios::trunc | std::ios::binary);
  if (!*file)
    throw am::runtime_error("actormesh launch: --log-dir: cannot write '" + path.string() + "': "
                            + std::strerror(errno));
  return file;
}

} // namespace

process_logs open_process_logs(const std::string& dir, int attempt, int process) {
  const auto folder = std::filesystem::path(dir) / ("attempt_" + std::to_string(attempt)) / std::to_string(process);
  std::error_code failed;
  std::filesystem::create_directories(folder, failed);
  if (failed)
    throw am::runtime_error("actormesh launch: --log-dir: cannot create '" + folder.string() + "': "
                            + failed.message());
  return {open_log(folder / "stdout.log"), open_log(folder / "stderr.log")};
}

} // namespace am::tools
