#pragma once

#include <spdlog/common.h>
#include <spdlog/formatter.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "metrics_adapter/logging/log_options.h"

namespace metrics_adapter::logging {

// One served request, as the access log records it.
struct AccessEntry {
  std::string user;  // "" when unknown (no authentication, or refused before it)
  std::string verb;
  std::string target;  // raw request target; redacted before it is written
  int code = 0;
  std::chrono::microseconds latency{0};
  std::string remote;
  std::optional<std::chrono::microseconds> promql_time;  // when the request queried Prometheus
};

// Replaces the values of query parameters that may carry credentials (names containing
// "token", "password", "secret" or "key", any case) by "REDACTED"; the rest is kept verbatim.
std::string redactTarget(std::string_view target);

// The access-log line: text "GET /path 200 1.234ms user=u remote=a", or in JSON mode the
// members (without braces) "verb":"GET","path":"/path",... that the JSON formatter merges.
std::string formatAccessEntry(const AccessEntry& entry, LogFormat format);

// Writes `entry` at debug level (visible from --v=6, as upstream's per-request lines).
void logAccess(const AccessEntry& entry);

// Whether logAccess writes anything (--v=6 and up): callers check it before they copy what an
// entry needs.
bool accessLogged();

// Formats every message as one JSON object per line: {"ts":"<UTC RFC 3339>","level":"info",
// "msg":"..."}; messages of the "access" logger carry formatAccessEntry members instead of msg
// text and read {"ts":...,"level":"debug","msg":"request",<members>}.
std::unique_ptr<spdlog::formatter> makeJsonFormatter();

// The spdlog level for upstream's --v: 0-5 info, 6-7 debug, 8+ trace.
int levelForVerbosity(int verbosity);

// Changes --v at run time (the debug socket's PUT /debug/flags/v): the loggers' levels and, with
// --vmodule, the verbosity of files no rule raises above it. Destinations stay as they are.
// Thread-safe; before configureLogging it changes nothing that configureLogging keeps.
void setLogVerbosity(int verbosity);

// What configureLogging would refuse, checked without opening or creating anything (for
// --dry-run): a malformed --log_backtrace_at, a negative --log-flush-frequency, and with
// --logtostderr=false a --log_file that cannot be written or created, or a --log_dir (the
// temporary directory when unset) that is not an existing writable directory or holds a
// metrics-adapter.{INFO,WARNING,ERROR} that cannot be written. Throws std::invalid_argument
// naming the flag and the path.
void checkLogOptions(const LogOptions& options);

// Test seams of configureLogging.
struct LogOverrides {
  spdlog::sink_ptr stderr_sink;  // receives what would go to stderr; null: the real stderr
  std::optional<std::uint64_t> log_file_max_bytes;  // replaces --log_file_max_size's MB
};

// Sets up spdlog as klog's flags say (LogOptions): a level from --v (0-5 info, 6-7 debug, 8+
// trace) and --vmodule, text lines or JSON objects (--log-format), on stderr or in the files of
// --log_file/--log_dir with --logtostderr=false. Throws std::invalid_argument naming the flag
// when a file cannot be opened. Idempotent.
void configureLogging(const LogOptions& options);

// configureLogging with `overrides`. Every flag of LogOptions takes effect:
// - --logtostderr (default): everything to stderr, file flags ignored (one warning names them).
// - otherwise --log_file (every message), or else --log_dir's metrics-adapter.INFO (everything),
//   .WARNING (warnings and errors), .ERROR (errors), or with --one_output each its own severity
//   only; plus stderr for --alsologtostderr (everything) or from --stderrthreshold on.
// - files are opened (appended to) before anything is replaced: on failure the previous
//   configuration stays and std::invalid_argument names the flag and the path.
// - text files start with klog's header lines unless --skip_log_headers; JSON files never do
//   (they would not be JSON lines).
// - --vmodule and --log_backtrace_at put a LogFilterSink (logging/log_sinks.h) in front of the main
//   logger's sinks; without them a message goes straight to the sinks. The "access" logger
//   follows --v only, so logExchange's should_log check stays the whole cost of an unlogged
//   request.
// - --log-flush-frequency: spdlog::flush_every, in whole seconds (rounded up; spdlog 1.10's
//   flusher counts seconds); errors are flushed at once.
// Idempotent: a second call replaces loggers, sinks and flusher. Not safe to call concurrently
// with itself.
void configureLogging(const LogOptions& options, const LogOverrides& overrides);

}  // namespace metrics_adapter::logging
