#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace metrics_adapter::prometheus {

using Clock = std::chrono::system_clock;

struct Sample {
  std::map<std::string, std::string> labels;  // includes __name__ when Prometheus returns it
  double value = 0;
  double timestamp = 0;  // seconds since the epoch, as Prometheus reports it
};

// Sample times the adapter serves, in seconds since the epoch: from the epoch up to
// 9999-12-31T23:59:59Z, the last second an RFC 3339 time with a four-digit year can name.
inline constexpr double kMaxSampleTime = 253402300799.0;

// False for NaN, ±Inf and every time outside [0, kMaxSampleTime]. A sample with such a time is
// a bad sample: left out of the answer, never converted to an integer time.
inline bool isServableSampleTime(double seconds_since_epoch) {
  return seconds_since_epoch >= 0 && seconds_since_epoch <= kMaxSampleTime;
}

struct QueryResult {
  enum class Type { kVector, kScalar, kMatrix, kString };
  Type type = Type::kVector;
  std::vector<Sample> samples;  // vector: one per series; scalar: one without labels;
                                // matrix/string: empty (callers treat them as errors)
  std::vector<std::string> warnings;
  // Samples left out of `samples` because their time is not isServableSampleTime().
  std::size_t bad_samples = 0;
};

// "an instant vector", "a scalar", "a range vector", "a string": for messages about answers of
// the wrong type.
inline const char* describeResultType(QueryResult::Type type) {
  switch (type) {
    case QueryResult::Type::kVector:
      return "an instant vector";
    case QueryResult::Type::kScalar:
      return "a scalar";
    case QueryResult::Type::kMatrix:
      return "a range vector";
    case QueryResult::Type::kString:
      return "a string";
  }
  return "an unknown type";
}

// One series of a /api/v1/query_range answer: its labels and its points in time order.
struct RangeSeries {
  std::map<std::string, std::string> labels;  // includes __name__ when Prometheus returns it
  std::vector<double> times;                  // seconds since the epoch
  std::vector<double> values;                 // same length as times; NaN/±Inf kept as such
};

struct RangeResult {
  std::vector<RangeSeries> series;  // in Prometheus's order
  std::vector<std::string> warnings;
  // Points left out of `series` because their time is not isServableSampleTime().
  std::size_t bad_samples = 0;
};

// Called once per series of a /api/v1/series answer, while the answer is being parsed.
// `label_names` excludes __name__. The views are valid only during the call.
using SeriesVisitor = std::function<void(std::string_view metric_name,
                                         const std::vector<std::string_view>& label_names)>;

// Why a call failed; the API layer maps kUnreachable/kTimeout/kHttpStatus(5xx) to 503.
// what() may reach API clients: it quotes Prometheus's own words but names no URL, host, port
// or credential. detail() is for the log and may name them.
class PrometheusError : public std::runtime_error {
 public:
  enum class Kind {
    kUnreachable,  // connection refused, DNS, TLS handshake
    kTimeout,      // deadline passed
    kHttpStatus,   // non-2xx without a Prometheus error body
    kApiError,     // {"status":"error"}: message is "<errorType>: <error>"
    kBadResponse,  // undecodable / truncated / too large body
  };
  PrometheusError(Kind kind, int http_status, const std::string& message, std::string detail = "")
      : std::runtime_error(message),
        kind_(kind),
        http_status_(http_status),
        detail_(std::move(detail)) {}
  Kind kind() const { return kind_; }
  int httpStatus() const { return http_status_; }  // 0 when no response
  // The message with internal detail, for the log only; what() when there is none.
  std::string detail() const { return detail_.empty() ? std::string(what()) : detail_; }

 private:
  Kind kind_;
  int http_status_;
  std::string detail_;
};

// The Prometheus HTTP API as the adapter uses it. Implementations are thread-safe.
class PrometheusApi {
 public:
  virtual ~PrometheusApi() = default;

  // GET/POST /api/v1/query with query, time and timeout. Throws PrometheusError.
  virtual QueryResult query(const std::string& promql, Clock::time_point at,
                            std::chrono::milliseconds timeout) = 0;
  // The same answer, shared instead of copied: CoalescingPrometheusApi hands every caller of one
  // query the answer it holds (copying 100 samples' label maps for each caller was a fifth of
  // the allocations of a pods/* request; docs/performance.md, round 4). The request handlers
  // call this one. By default, query()'s answer.
  virtual std::shared_ptr<const QueryResult> sharedQuery(const std::string& promql,
                                                         Clock::time_point at,
                                                         std::chrono::milliseconds timeout) {
    return std::make_shared<const QueryResult>(query(promql, at, timeout));
  }

  // GET/POST /api/v1/query_range with query, start, end, step (seconds, may be fractional) and
  // timeout. The answer must be a matrix (anything else is kBadResponse). Prometheus refuses more
  // than 11,000 points per series; callers chunk longer ranges. Throws PrometheusError.
  virtual RangeResult queryRange(const std::string& promql, Clock::time_point start,
                                 Clock::time_point end, std::chrono::milliseconds step,
                                 std::chrono::milliseconds timeout) = 0;

  // /api/v1/series with match[]=selector and start; streams each series to `visitor`
  // without holding the whole answer. Throws PrometheusError.
  virtual void series(const std::string& selector, Clock::time_point start,
                      std::chrono::milliseconds timeout, const SeriesVisitor& visitor) = 0;
};

}  // namespace metrics_adapter::prometheus
