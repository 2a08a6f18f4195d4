#pragma once

#include <spdlog/formatter.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "metrics_adapter/app/flags.h"
#include "metrics_adapter/server/exchange_observer.h"

namespace metrics_adapter::app {

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

// logAccess for one exchange the server answered (the access log of the request pipeline).
void logExchange(const server::Exchange& exchange);

// Formats every message as one JSON object per line: {"ts":"<UTC RFC 3339>","level":"info",
// "msg":"..."}; messages of the "access" logger carry formatAccessEntry members instead of msg
// text and read {"ts":...,"level":"debug","msg":"request",<members>}.
std::unique_ptr<spdlog::formatter> makeJsonFormatter();

// The spdlog level for upstream's --v: 0-5 info, 6-7 debug, 8+ trace.
int levelForVerbosity(int verbosity);

}  // namespace metrics_adapter::app
