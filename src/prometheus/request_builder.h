#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics_adapter/prometheus/prometheus_api.h"

namespace metrics_adapter::prometheus {

// A --prometheus-url split into the parts every call reuses. All parts stay percent-encoded
// exactly as the user wrote them.
struct BaseUrl {
  std::string scheme;       // "http" or "https"
  std::string host;         // as written, IPv6 literals keep their brackets
  int port = 0;             // 0 when the URL names none (scheme default)
  std::string origin;       // scheme://host[:port], what the HTTP client connects to
  std::string path_prefix;  // path without trailing '/', e.g. "/prom"; "" for none
  std::string query;        // query without '?', kept on every call (Thanos dedup=true...)

  // origin + path_prefix: how messages name the server (never the query, which may hold secrets).
  std::string display() const { return origin + path_prefix; }
};

// Throws std::invalid_argument naming --prometheus-url for anything but an absolute http(s) URL
// with a host, or for credentials in the URL (they would be silently dropped).
BaseUrl parseBaseUrl(const std::string& url);

enum class Verb { kGet, kPost };

// "GET" or "POST" in any case; anything else throws std::invalid_argument naming
// --prometheus-verb.
Verb parseVerb(std::string_view verb);

using Params = std::vector<std::pair<std::string, std::string>>;

// name=value pairs joined with '&', each side percent-encoded (text::percentEncode).
std::string encodeParams(const Params& params);

// Seconds since the epoch with exactly three decimals ("1700000000.123"), as Prometheus parses
// its time parameters; sub-millisecond parts are truncated towards the past.
std::string formatPrometheusTime(Clock::time_point at);

// A duration as seconds with exactly three decimals ("60.000", "0.250"), the form of
// formatPrometheusTime; query_range's step.
std::string formatPrometheusSeconds(std::chrono::milliseconds duration);

// A Prometheus duration for a timeout: "5s" for whole seconds, else "1500ms".
std::string formatPrometheusDuration(std::chrono::milliseconds duration);

// The method, request target and body of one call. The base URL's query stays in the target
// with either verb; parameters go into the target (GET) or the form body (POST).
struct HttpRequestSpec {
  Verb verb = Verb::kGet;
  std::string target;  // path?query, already encoded
  std::string body;    // form body for POST, empty for GET
};

// `endpoint` is e.g. "/api/v1/query". POST is used when `verb` is POST or when the encoded
// parameters are longer than `post_threshold_bytes`.
HttpRequestSpec buildRequest(const BaseUrl& base, std::string_view endpoint, const Params& params,
                             Verb verb, std::size_t post_threshold_bytes);

}  // namespace metrics_adapter::prometheus
