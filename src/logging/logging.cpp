#include "metrics_adapter/logging/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "logging/log_files.h"
#include "logging/log_sinks.h"
#include "logging/log_vmodule.h"
#include "metrics_adapter/text/ascii.h"
#include "metrics_adapter/text/json_quote.h"

namespace metrics_adapter::logging {
namespace {

constexpr const char* kLoggerName = "metrics-adapter";
constexpr const char* kAccessLoggerName = "access";

std::atomic<LogFormat> current_format{LogFormat::kText};

// What setLogVerbosity needs from the last configureLogging.
struct LiveLogging {
  std::vector<VmoduleRule> vmodule;
  std::shared_ptr<LogFilterSink> filter;  // null without --vmodule and --log_backtrace_at
};
std::mutex live_logging_mutex;
LiveLogging live_logging;  // guarded by live_logging_mutex

// --log_dir's files: metrics-adapter.<suffix> takes messages from `floor` up (to `ceiling` with
// --one_output). klog's FATAL file has no counterpart: critical messages are ERRORs.
struct SeverityFile {
  const char* suffix;
  spdlog::level::level_enum floor;
  spdlog::level::level_enum ceiling;
};
constexpr SeverityFile kSeverityFiles[] = {
    {"INFO", spdlog::level::trace, spdlog::level::info},
    {"WARNING", spdlog::level::warn, spdlog::level::warn},
    {"ERROR", spdlog::level::err, spdlog::level::critical},
};

// --log_dir, or as klog the temporary directory when it is unset.
std::string logDirectoryFor(const LogOptions& options) {
  if (!options.log_dir.empty()) return options.log_dir;
  std::error_code error;
  auto temp = std::filesystem::temp_directory_path(error);
  return error ? std::string("/tmp") : temp.string();
}

spdlog::level::level_enum stderrLevelFor(LogSeverity threshold) {
  switch (threshold) {
    case LogSeverity::kInfo:
      return spdlog::level::trace;  // INFO includes every verbosity
    case LogSeverity::kWarning:
      return spdlog::level::warn;
    case LogSeverity::kError:
      return spdlog::level::err;
    case LogSeverity::kFatal:
      return spdlog::level::critical;
  }
  return spdlog::level::err;
}

// The "Log line format:" header line: what makeTextFormatter writes.
std::string logLineFormat(const LogOptions& options) {
  if (options.skip_headers) return "msg";
  return options.add_dir_header ? "yyyy-mm-ddThh:mm:ss.mmm+hh:mm [TDIWEC] dir/file:line] msg"
                                : "yyyy-mm-ddThh:mm:ss.mmm+hh:mm [TDIWEC] file:line] msg";
}

// The flags given a value other than klog's default that only matter with --logtostderr=false.
std::string ignoredFileFlags(const LogOptions& options) {
  const LogOptions defaults;
  std::vector<std::string_view> names;
  if (!options.log_dir.empty()) names.emplace_back("--log_dir");
  if (!options.log_file.empty()) names.emplace_back("--log_file");
  if (options.log_file_max_size_mb != defaults.log_file_max_size_mb) {
    names.emplace_back("--log_file_max_size");
  }
  if (options.alsologtostderr) names.emplace_back("--alsologtostderr");
  if (options.stderrthreshold != defaults.stderrthreshold) names.emplace_back("--stderrthreshold");
  if (options.one_output) names.emplace_back("--one_output");
  if (options.skip_log_headers) names.emplace_back("--skip_log_headers");
  std::string joined;
  for (auto name : names) {
    if (!joined.empty()) joined += ", ";
    joined += name;
  }
  return joined;
}

bool isSecretName(std::string_view name) {
  const std::string lower = text::lowerAscii(name);
  for (const char* word : {"token", "password", "secret", "key"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return false;
}

std::string millis(std::chrono::microseconds duration) {
  return fmt::format("{:.3f}", static_cast<double>(duration.count()) / 1000.0);
}

std::string utcTimestamp(spdlog::log_clock::time_point time) {
  auto seconds = std::chrono::time_point_cast<std::chrono::seconds>(time);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(time - seconds).count();
  std::time_t t = spdlog::log_clock::to_time_t(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buffer, static_cast<int>(ms));
}

class JsonFormatter : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    auto level_name = spdlog::level::to_string_view(msg.level);
    std::string_view level(level_name.data(), level_name.size());
    std::string_view payload(msg.payload.data(), msg.payload.size());
    std::string line = R"({"ts":")";
    line.append(utcTimestamp(msg.time)).append(R"(","level":")").append(level).append(R"(",)");
    if (std::string_view(msg.logger_name.data(), msg.logger_name.size()) == kAccessLoggerName) {
      line.append(R"("msg":"request",)").append(payload);
    } else {
      line.append(R"("msg":)").append(text::jsonQuote(payload));
    }
    line += "}\n";
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

}  // namespace

std::string redactTarget(std::string_view target) {
  auto question = target.find('?');
  if (question == std::string_view::npos) return std::string(target);
  std::string result(target.substr(0, question + 1));
  std::string_view query = target.substr(question + 1);
  bool first = true;
  while (true) {
    auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    if (!first) result += '&';
    first = false;
    auto eq = pair.find('=');
    if (eq != std::string_view::npos && isSecretName(pair.substr(0, eq))) {
      result += std::string(pair.substr(0, eq)) + "=REDACTED";
    } else {
      result += pair;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return result;
}

std::string formatAccessEntry(const AccessEntry& entry, LogFormat format) {
  std::string path = redactTarget(entry.target);
  if (format == LogFormat::kJson) {
    std::string members =
        "\"verb\":" + text::jsonQuote(entry.verb) + ",\"path\":" + text::jsonQuote(path) +
        ",\"code\":" + std::to_string(entry.code) + ",\"latency_ms\":" + millis(entry.latency);
    if (entry.promql_time) members += ",\"promql_ms\":" + millis(*entry.promql_time);
    if (!entry.user.empty()) members += ",\"user\":" + text::jsonQuote(entry.user);
    if (!entry.remote.empty()) members += ",\"remote\":" + text::jsonQuote(entry.remote);
    return members;
  }
  std::string line = entry.verb + " " + path + " " + std::to_string(entry.code) + " " +
                     millis(entry.latency) + "ms";
  if (entry.promql_time) line += " promql=" + millis(*entry.promql_time) + "ms";
  if (!entry.user.empty()) line += " user=" + text::jsonQuote(entry.user);
  if (!entry.remote.empty()) line += " remote=" + entry.remote;
  return line;
}

void logAccess(const AccessEntry& entry) {
  auto logger = spdlog::get(kAccessLoggerName);
  if (!logger || !logger->should_log(spdlog::level::debug)) return;
  logger->debug("{}", formatAccessEntry(entry, current_format.load()));
}

bool accessLogged() {
  auto logger = spdlog::get(kAccessLoggerName);
  return logger && logger->should_log(spdlog::level::debug);
}

int levelForVerbosity(int verbosity) {
  if (verbosity >= 8) return spdlog::level::trace;
  if (verbosity >= 6) return spdlog::level::debug;
  return spdlog::level::info;
}

std::unique_ptr<spdlog::formatter> makeJsonFormatter() { return std::make_unique<JsonFormatter>(); }

void setLogVerbosity(int verbosity) {
  std::lock_guard lock(live_logging_mutex);
  int most_verbose = verbosity;
  for (const auto& rule : live_logging.vmodule)
    most_verbose = std::max(most_verbose, rule.verbosity);
  if (live_logging.filter) live_logging.filter->setVerbosity(verbosity);
  if (auto logger = spdlog::get(kLoggerName)) {
    logger->set_level(static_cast<spdlog::level::level_enum>(levelForVerbosity(most_verbose)));
  }
  if (auto access = spdlog::get(kAccessLoggerName)) {
    access->set_level(static_cast<spdlog::level::level_enum>(levelForVerbosity(verbosity)));
  }
}

void checkLogOptions(const LogOptions& options) {
  parseBacktraceAt(options.log_backtrace_at);
  if (options.flush_frequency.count() < 0) {
    throw std::invalid_argument("--log-flush-frequency: must not be negative");
  }
  if (options.logtostderr) return;  // the file flags do nothing
  if (!options.log_file.empty()) {
    checkLogFileWritable("--log_file", options.log_file);
    return;
  }
  const std::string dir = logDirectoryFor(options);
  checkLogDirWritable("--log_dir", dir);
  for (const auto& file : kSeverityFiles) {
    checkLogFileWritable("--log_dir", dir + "/" + kLoggerName + "." + file.suffix);
  }
}

void configureLogging(const LogOptions& options) { configureLogging(options, LogOverrides{}); }

void configureLogging(const LogOptions& options, const LogOverrides& overrides) {
  checkLogOptions(options);
  auto backtrace_at = parseBacktraceAt(options.log_backtrace_at);
  const bool text = options.format == LogFormat::kText;
  std::unique_ptr<spdlog::formatter> formatter =
      text ? makeTextFormatter(options.skip_headers, options.add_dir_header) : makeJsonFormatter();

  // Everything that can fail (opening files) happens before the current loggers are touched.
  std::vector<spdlog::sink_ptr> sinks;
  if (!options.logtostderr) {
    const std::uint64_t max_bytes =
        overrides.log_file_max_bytes.value_or(logFileMaxBytes(options.log_file_max_size_mb));
    const std::string header =
        text && !options.skip_log_headers ? logLineFormat(options) : std::string();
    if (!options.log_file.empty()) {
      auto file = openLogFile("--log_file", options.log_file, max_bytes, header);
      file->set_formatter(formatter->clone());
      sinks.push_back(std::move(file));
    } else {
      const std::string dir = logDirectoryFor(options);
      for (const auto& severity : kSeverityFiles) {
        auto file = openLogFile("--log_dir", dir + "/" + kLoggerName + "." + severity.suffix,
                                max_bytes, header);
        file->set_formatter(formatter->clone());
        spdlog::sink_ptr sink = file;
        if (options.one_output) sink = std::make_shared<LogCeilingSink>(file, severity.ceiling);
        sink->set_level(severity.floor);
        sinks.push_back(std::move(sink));
      }
    }
  }
  spdlog::sink_ptr stderr_sink = overrides.stderr_sink
                                     ? overrides.stderr_sink
                                     : std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  stderr_sink->set_formatter(formatter->clone());
  stderr_sink->set_level(options.logtostderr || options.alsologtostderr
                             ? spdlog::level::trace
                             : stderrLevelFor(options.stderrthreshold));
  sinks.push_back(stderr_sink);

  std::optional<VmoduleMatcher> vmodule;
  if (!options.vmodule.empty()) vmodule.emplace(options.verbosity, options.vmodule);
  const int most_verbose = vmodule ? vmodule->mostVerbose() : options.verbosity;
  std::vector<spdlog::sink_ptr> main_sinks = sinks;
  std::shared_ptr<LogFilterSink> filter;
  if (vmodule || backtrace_at) {
    filter = std::make_shared<LogFilterSink>(std::move(vmodule), std::move(backtrace_at), sinks);
    main_sinks = {filter};
  }

  std::lock_guard lock(live_logging_mutex);
  live_logging = LiveLogging{options.vmodule, filter};
  current_format = options.format;
  // Idempotent: a second call replaces both loggers (their sinks close with the last user).
  spdlog::drop(kLoggerName);
  spdlog::drop(kAccessLoggerName);
  auto logger = std::make_shared<spdlog::logger>(kLoggerName, main_sinks.begin(), main_sinks.end());
  auto access = std::make_shared<spdlog::logger>(kAccessLoggerName, sinks.begin(), sinks.end());
  logger->set_level(static_cast<spdlog::level::level_enum>(levelForVerbosity(most_verbose)));
  access->set_level(static_cast<spdlog::level::level_enum>(levelForVerbosity(options.verbosity)));
  logger->flush_on(spdlog::level::err);
  spdlog::register_logger(access);
  spdlog::set_default_logger(logger);
  auto seconds = std::chrono::ceil<std::chrono::seconds>(options.flush_frequency);
  spdlog::flush_every(seconds);

  if (options.logtostderr) {
    std::string ignored = ignoredFileFlags(options);
    if (!ignored.empty()) {
      logger->warn(
          "{} ignored: --logtostderr is true (the default), so everything goes to stderr; "
          "pass --logtostderr=false to write log files",
          ignored);
    }
  }
}

}  // namespace metrics_adapter::logging
