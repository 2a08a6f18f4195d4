#pragma once

#include <spdlog/formatter.h>
#include <spdlog/sinks/sink.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "logging/log_vmodule.h"

namespace metrics_adapter::logging {

// The calling thread's stack, one "#N <frame>" line per frame (glibc backtrace_symbols: module,
// offset and, for exported symbols, the function), after a first line naming --log_backtrace_at.
std::string logStackTrace();

// Text lines. --skip_headers: the message only. Otherwise
//   "2024-01-02T03:04:05.678+0000 I connection.cpp:123] message"
// (local time; level letter T D I W E C), where the source part is there only for messages
// that carry their location (the SPDLOG_* macros), as the base name and line, or with
// `add_dir_header` the file's parent directory too ("server/connection.cpp:123"), which names
// the module in this source tree without the build machine's absolute path.
std::unique_ptr<spdlog::formatter> makeTextFormatter(bool skip_headers, bool add_dir_header);

// The main logger's front when --vmodule or --log_backtrace_at is set: drops a debug or trace
// message above the verbosity its source file gets (messages without a location get --v's),
// appends logStackTrace() to a message from the --log_backtrace_at line, and hands the rest to
// each of `sinks` whose level admits it. Thread-safe; the per-file decision is cached by file
// name (bounded). Without those flags the logger writes to the sinks directly.
class LogFilterSink final : public spdlog::sinks::sink {
 public:
  LogFilterSink(std::optional<VmoduleMatcher> vmodule,
                std::optional<BacktraceLocation> backtrace_at, std::vector<spdlog::sink_ptr> sinks);

  void log(const spdlog::details::log_msg& msg) override;
  void flush() override;
  void set_pattern(const std::string& pattern) override;
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override;

  // Another --v for the same --vmodule rules (setLogVerbosity); thread-safe.
  void setVerbosity(int verbosity);

 private:
  // The least severe level a message from `source` is logged at.
  spdlog::level::level_enum allowedLevel(const spdlog::source_loc& source);
  bool isBacktraceSite(const spdlog::source_loc& source) const;
  void forward(const spdlog::details::log_msg& msg);

  const bool filters_by_file_;
  const std::optional<BacktraceLocation> backtrace_at_;
  const std::vector<spdlog::sink_ptr> sinks_;
  std::mutex mutex_;  // guards the three below
  std::optional<VmoduleMatcher> vmodule_;
  spdlog::level::level_enum unknown_source_level_ = spdlog::level::info;
  std::map<std::string, spdlog::level::level_enum, std::less<>> file_levels_;
};

// --one_output: passes to `inner` only messages at `ceiling` or below (the sink's own level,
// set_level, is the floor), so each severity file holds only its own severity.
class LogCeilingSink final : public spdlog::sinks::sink {
 public:
  LogCeilingSink(spdlog::sink_ptr inner, spdlog::level::level_enum ceiling);

  void log(const spdlog::details::log_msg& msg) override;
  void flush() override;
  void set_pattern(const std::string& pattern) override;
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override;

 private:
  spdlog::sink_ptr inner_;
  spdlog::level::level_enum ceiling_;
};

}  // namespace metrics_adapter::logging
