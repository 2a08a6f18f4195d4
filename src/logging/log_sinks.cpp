#include "logging/log_sinks.h"

#include <execinfo.h>
#include <spdlog/details/log_msg.h>
#include <spdlog/pattern_formatter.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include "metrics_adapter/logging/logging.h"

namespace metrics_adapter::logging {
namespace {

constexpr std::size_t kMaxCachedSourceFiles = 4096;
constexpr int kMaxStackFrames = 64;

// "%*" in the text pattern: "file.cpp:123] " for a message that knows where it was logged.
class LogSourceFlag final : public spdlog::custom_flag_formatter {
 public:
  explicit LogSourceFlag(bool with_dir) : with_dir_(with_dir) {}

  void format(const spdlog::details::log_msg& msg, const std::tm& /*tm_time*/,
              spdlog::memory_buf_t& dest) override {
    if (msg.source.empty()) return;
    std::string_view file(msg.source.filename);
    auto slash = file.rfind('/');
    if (slash != std::string_view::npos) {
      auto parent = with_dir_ && slash > 0 ? file.rfind('/', slash - 1) : slash;
      file.remove_prefix(parent == std::string_view::npos ? 0 : parent + 1);
    }
    dest.append(file.data(), file.data() + file.size());
    auto suffix = fmt::format(":{}] ", msg.source.line);
    dest.append(suffix.data(), suffix.data() + suffix.size());
  }

  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<LogSourceFlag>(with_dir_);
  }

 private:
  bool with_dir_;
};

spdlog::level::level_enum spdlogLevelForVerbosity(int verbosity) {
  return static_cast<spdlog::level::level_enum>(levelForVerbosity(verbosity));
}

bool pathEndIs(std::string_view path, std::string_view end) {
  if (path.size() < end.size() || path.substr(path.size() - end.size()) != end) return false;
  return path.size() == end.size() || path[path.size() - end.size() - 1] == '/';
}

}  // namespace

std::optional<BacktraceLocation> parseBacktraceAt(std::string_view text) {
  // ":0" is how klog prints the unset flag (--help's "default :0"); klog's own Set refuses it,
  // but an operator who passes the printed default back means "unset", so it is taken as that.
  if (text.empty() || text == ":0") return std::nullopt;
  const auto syntax = [text] {
    return std::invalid_argument(
        "--log_backtrace_at: expected file:line (e.g. connection.cpp:42), got \"" +
        std::string(text) + "\"");
  };
  // klog: exactly two ':'-separated fields, a '.' in the file, the line as Go's Atoi reads it.
  const auto colon = text.find(':');
  if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos) {
    throw syntax();
  }
  const std::string_view file = text.substr(0, colon);
  std::string_view digits = text.substr(colon + 1);
  if (file.find('.') == std::string_view::npos) throw syntax();
  const bool negative = !digits.empty() && digits.front() == '-';
  if (!digits.empty() && (digits.front() == '+' || digits.front() == '-')) digits.remove_prefix(1);
  std::int64_t line = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), line);
  if (digits.empty() || digits.front() < '0' || digits.front() > '9' || error != std::errc() ||
      end != digits.data() + digits.size()) {
    throw syntax();
  }
  if (negative || line == 0) {
    throw std::invalid_argument("--log_backtrace_at: the line must be positive, got \"" +
                                std::string(text) + "\"");
  }
  return BacktraceLocation{std::string(file), line};
}

std::string logStackTrace() {
  std::array<void*, kMaxStackFrames> frames{};
  int count = backtrace(frames.data(), kMaxStackFrames);
  char** symbols = backtrace_symbols(frames.data(), count);
  std::string trace = "stack trace (--log_backtrace_at):";
  for (int i = 0; i < count; ++i) {
    trace += fmt::format("\n#{} ", i);
    trace += symbols != nullptr ? std::string(symbols[i]) : fmt::format("{}", frames[i]);
  }
  std::free(symbols);  // NOLINT(cppcoreguidelines-no-malloc): backtrace_symbols' contract
  return trace;
}

std::unique_ptr<spdlog::formatter> makeTextFormatter(bool skip_headers, bool add_dir_header) {
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<LogSourceFlag>('*', add_dir_header);
  formatter->set_pattern(skip_headers ? "%v" : "%Y-%m-%dT%H:%M:%S.%e%z %^%L%$ %*%v");
  return formatter;
}

LogFilterSink::LogFilterSink(std::optional<VmoduleMatcher> vmodule,
                             std::optional<BacktraceLocation> backtrace_at,
                             std::vector<spdlog::sink_ptr> sinks)
    : filters_by_file_(vmodule.has_value()),
      backtrace_at_(std::move(backtrace_at)),
      sinks_(std::move(sinks)),
      vmodule_(std::move(vmodule)) {
  if (vmodule_) unknown_source_level_ = spdlogLevelForVerbosity(vmodule_->baseVerbosity());
}

void LogFilterSink::setVerbosity(int verbosity) {
  std::lock_guard lock(mutex_);
  if (!vmodule_) return;
  vmodule_ = vmodule_->withVerbosity(verbosity);
  unknown_source_level_ = spdlogLevelForVerbosity(verbosity);
  file_levels_.clear();
}

spdlog::level::level_enum LogFilterSink::allowedLevel(const spdlog::source_loc& source) {
  std::lock_guard lock(mutex_);
  if (source.empty()) return unknown_source_level_;
  std::string_view filename(source.filename);
  auto found = file_levels_.find(filename);
  if (found != file_levels_.end()) return found->second;
  auto level = spdlogLevelForVerbosity(vmodule_->verbosityFor(filename));
  if (file_levels_.size() >= kMaxCachedSourceFiles) file_levels_.clear();
  file_levels_.emplace(std::string(filename), level);
  return level;
}

bool LogFilterSink::isBacktraceSite(const spdlog::source_loc& source) const {
  return !source.empty() && source.line == backtrace_at_->line &&
         pathEndIs(source.filename, backtrace_at_->file);
}

void LogFilterSink::log(const spdlog::details::log_msg& msg) {
  // Info and worse are never filtered (klog's vmodule gates V-levels only).
  if (filters_by_file_ && msg.level < spdlog::level::info && msg.level < allowedLevel(msg.source)) {
    return;
  }
  if (backtrace_at_ && isBacktraceSite(msg.source)) {
    std::string text(msg.payload.data(), msg.payload.size());
    text += '\n';
    text += logStackTrace();
    spdlog::details::log_msg traced = msg;
    traced.payload = spdlog::string_view_t(text.data(), text.size());
    forward(traced);
    return;
  }
  forward(msg);
}

void LogFilterSink::forward(const spdlog::details::log_msg& msg) {
  for (const auto& sink : sinks_) {
    if (sink->should_log(msg.level)) sink->log(msg);
  }
}

void LogFilterSink::flush() {
  for (const auto& sink : sinks_) sink->flush();
}

void LogFilterSink::set_pattern(const std::string& pattern) {
  for (const auto& sink : sinks_) sink->set_pattern(pattern);
}

void LogFilterSink::set_formatter(std::unique_ptr<spdlog::formatter> formatter) {
  for (const auto& sink : sinks_) sink->set_formatter(formatter->clone());
}

LogCeilingSink::LogCeilingSink(spdlog::sink_ptr inner, spdlog::level::level_enum ceiling)
    : inner_(std::move(inner)), ceiling_(ceiling) {}

void LogCeilingSink::log(const spdlog::details::log_msg& msg) {
  if (msg.level <= ceiling_) inner_->log(msg);
}

void LogCeilingSink::flush() { inner_->flush(); }

void LogCeilingSink::set_pattern(const std::string& pattern) { inner_->set_pattern(pattern); }

void LogCeilingSink::set_formatter(std::unique_ptr<spdlog::formatter> formatter) {
  inner_->set_formatter(std::move(formatter));
}

}  // namespace metrics_adapter::logging
