#pragma once

#include <spdlog/common.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace metrics_adapter::logging {

// How many rotated files (name.1.ext newest ... name.5.ext oldest) a rotating log file keeps.
constexpr std::size_t kKeptRotatedLogFiles = 5;

// --log_file_max_size's megabytes (2^20 bytes) in bytes, saturating instead of overflowing.
std::uint64_t logFileMaxBytes(std::uint64_t megabytes);

// What klog writes at the top of each new log file: "Log file created at: 2024/01/02 15:04:05"
// (local time), "Running on machine: <host>", "Binary: metrics-adapter <version>" and
// "Log line format: <line_format>", each ending in '\n'.
std::string logFileHeader(std::chrono::system_clock::time_point now, std::string_view line_format);

// The sink of one log file, opened now (created, or appended to). `max_bytes` > 0: rotated once
// a line would take it past that many bytes (the header lines are not counted), keeping
// kKeptRotatedLogFiles; 0: never rotated. A non-empty `header_line_format`: every file opened,
// at start and after each rotation, begins with logFileHeader. Throws
// std::invalid_argument("<flag>: cannot open <path>: <reason>").
spdlog::sink_ptr openLogFile(std::string_view flag, const std::string& path,
                             std::uint64_t max_bytes, std::string_view header_line_format);

// Throws std::invalid_argument naming `flag` and `dir` unless it is an existing directory this
// process may create files in.
void checkLogDirWritable(std::string_view flag, const std::string& dir);

// Throws std::invalid_argument naming `flag` and `path` unless `path` is a writable file or may
// be created in an existing, writable directory. Opens nothing.
void checkLogFileWritable(std::string_view flag, const std::string& path);

}  // namespace metrics_adapter::logging
