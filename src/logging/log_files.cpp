#include "logging/log_files.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <stdexcept>

#ifndef MA_VERSION
#define MA_VERSION "dev"
#endif

namespace metrics_adapter::logging {
namespace {

std::string hostNameForLogs() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

[[noreturn]] void throwUnwritable(std::string_view flag, const std::string& path,
                                  std::string_view reason) {
  throw std::invalid_argument(std::string(flag) + ": cannot write log files to \"" + path +
                              "\": " + std::string(reason));
}

}  // namespace

std::uint64_t logFileMaxBytes(std::uint64_t megabytes) {
  constexpr std::uint64_t kMaxMegabytes = std::numeric_limits<std::uint64_t>::max() >> 20;
  return megabytes > kMaxMegabytes ? std::numeric_limits<std::uint64_t>::max() : megabytes << 20;
}

std::string logFileHeader(std::chrono::system_clock::time_point now, std::string_view line_format) {
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  localtime_r(&t, &tm);
  char created[32];
  std::strftime(created, sizeof created, "%Y/%m/%d %H:%M:%S", &tm);
  return fmt::format(
      "Log file created at: {}\nRunning on machine: {}\nBinary: metrics-adapter {}\n"
      "Log line format: {}\n",
      created, hostNameForLogs(), MA_VERSION, line_format);
}

spdlog::sink_ptr openLogFile(std::string_view flag, const std::string& path,
                             std::uint64_t max_bytes, std::string_view header_line_format) {
  spdlog::file_event_handlers handlers;
  if (!header_line_format.empty()) {
    handlers.after_open = [format = std::string(header_line_format)](
                              const spdlog::filename_t& /*name*/, std::FILE* file) {
      std::string header = logFileHeader(std::chrono::system_clock::now(), format);
      std::fwrite(header.data(), 1, header.size(), file);
    };
  }
  try {
    if (max_bytes == 0) {
      return std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, false, handlers);
    }
    auto bytes = static_cast<std::size_t>(
        std::min<std::uint64_t>(max_bytes, std::numeric_limits<std::size_t>::max()));
    return std::make_shared<spdlog::sinks::rotating_file_sink_mt>(path, bytes, kKeptRotatedLogFiles,
                                                                  false, handlers);
  } catch (const spdlog::spdlog_ex& e) {
    throw std::invalid_argument(std::string(flag) + ": cannot open \"" + path + "\": " + e.what());
  }
}

void checkLogDirWritable(std::string_view flag, const std::string& dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    throwUnwritable(flag, dir, error ? error.message() : "not a directory");
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) throwUnwritable(flag, dir, std::strerror(errno));
}

void checkLogFileWritable(std::string_view flag, const std::string& path) {
  std::error_code error;
  auto status = std::filesystem::status(path, error);
  if (std::filesystem::exists(status)) {
    if (std::filesystem::is_directory(status)) throwUnwritable(flag, path, "is a directory");
    if (access(path.c_str(), W_OK) != 0) throwUnwritable(flag, path, std::strerror(errno));
    return;
  }
  if (error && error != std::errc::no_such_file_or_directory) {
    throwUnwritable(flag, path, error.message());
  }
  auto parent = std::filesystem::path(path).parent_path();
  std::string dir = parent.empty() ? "." : parent.string();
  if (!std::filesystem::is_directory(dir, error)) {
    throwUnwritable(flag, path, "directory \"" + dir + "\" does not exist");
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    throwUnwritable(flag, path, "directory \"" + dir + "\": " + std::strerror(errno));
  }
}

}  // namespace metrics_adapter::logging
