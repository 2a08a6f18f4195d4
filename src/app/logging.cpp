#include "app/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <ctime>

#include "metrics_adapter/app/adapter.h"
#include "metrics_adapter/server/status.h"
#include "metrics_adapter/text/ascii.h"

namespace metrics_adapter::app {
namespace {

constexpr const char* kLoggerName = "metrics-adapter";
constexpr const char* kAccessLoggerName = "access";
constexpr const char* kTextPattern = "%Y-%m-%dT%H:%M:%S.%e%z %^%L%$ %v";

std::atomic<LogFormat> current_format{LogFormat::kText};

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
      line.append(R"("msg":)").append(server::jsonQuote(payload));
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
        "\"verb\":" + server::jsonQuote(entry.verb) + ",\"path\":" + server::jsonQuote(path) +
        ",\"code\":" + std::to_string(entry.code) + ",\"latency_ms\":" + millis(entry.latency);
    if (entry.promql_time) members += ",\"promql_ms\":" + millis(*entry.promql_time);
    if (!entry.user.empty()) members += ",\"user\":" + server::jsonQuote(entry.user);
    if (!entry.remote.empty()) members += ",\"remote\":" + server::jsonQuote(entry.remote);
    return members;
  }
  std::string line = entry.verb + " " + path + " " + std::to_string(entry.code) + " " +
                     millis(entry.latency) + "ms";
  if (entry.promql_time) line += " promql=" + millis(*entry.promql_time) + "ms";
  if (!entry.user.empty()) line += " user=" + server::jsonQuote(entry.user);
  if (!entry.remote.empty()) line += " remote=" + entry.remote;
  return line;
}

void logAccess(const AccessEntry& entry) {
  auto logger = spdlog::get(kAccessLoggerName);
  if (!logger || !logger->should_log(spdlog::level::debug)) return;
  logger->debug("{}", formatAccessEntry(entry, current_format.load()));
}

void logExchange(const server::Exchange& exchange) {
  auto logger = spdlog::get(kAccessLoggerName);
  if (!logger || !logger->should_log(spdlog::level::debug)) return;  // copy nothing
  AccessEntry entry;
  entry.user = exchange.notes->user;
  // "-" for a request the server could not read (413, 431, malformed HTTP).
  entry.verb = exchange.method.empty() ? "-" : std::string(exchange.method);
  entry.target = exchange.target.empty() ? "-" : std::string(exchange.target);
  entry.code = exchange.code;
  entry.latency = exchange.latency;
  entry.remote = exchange.remote;
  entry.promql_time = exchange.notes->backend_time;
  logAccess(entry);
}

int levelForVerbosity(int verbosity) {
  if (verbosity >= 8) return spdlog::level::trace;
  if (verbosity >= 6) return spdlog::level::debug;
  return spdlog::level::info;
}

std::unique_ptr<spdlog::formatter> makeJsonFormatter() { return std::make_unique<JsonFormatter>(); }

void configureLogging(int verbosity, LogFormat format) {
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  if (format == LogFormat::kJson) {
    sink->set_formatter(makeJsonFormatter());
  } else {
    sink->set_pattern(kTextPattern);
  }
  current_format = format;
  // Idempotent: a second call replaces both loggers.
  spdlog::drop(kLoggerName);
  spdlog::drop(kAccessLoggerName);
  auto logger = std::make_shared<spdlog::logger>(kLoggerName, sink);
  auto access = std::make_shared<spdlog::logger>(kAccessLoggerName, sink);
  auto level = static_cast<spdlog::level::level_enum>(levelForVerbosity(verbosity));
  logger->set_level(level);
  access->set_level(level);
  spdlog::register_logger(access);
  spdlog::set_default_logger(logger);
}

}  // namespace metrics_adapter::app
