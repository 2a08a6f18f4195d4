#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "metrics_adapter/prometheus/prometheus_api.h"

namespace metrics_adapter::prometheus {

struct CoalescingOptions {
  // --metrics-cache-ttl: an answer evaluated at T also serves identical queries for any time up
  // to T + cache_ttl. 0 (the default) serves only queries for the same millisecond T (the time
  // resolution Prometheus is sent) or an earlier one.
  std::chrono::milliseconds cache_ttl{0};
  std::size_t max_cached_answers = 256;  // oldest answers are dropped beyond this
};

// A PrometheusApi decorator that makes identical queries share one call:
// - a query whose PromQL is already in flight waits for that call and gets its answer (evaluated
//   at the first caller's time, which is at most one query deadline earlier than its own);
// - a query whose PromQL was answered for a time T is served that answer for times up to
//   T + cache_ttl (millisecond resolution); failures are never remembered.
// So Prometheus sees at most one successful query per distinct (PromQL, evaluation time); after
// a failure the next caller tries again. Each caller
// still waits no longer than its own timeout. queryRange() and series() pass straight through.
// Thread-safe.
class CoalescingPrometheusApi : public PrometheusApi {
 public:
  CoalescingPrometheusApi(std::shared_ptr<PrometheusApi> inner, CoalescingOptions options);
  ~CoalescingPrometheusApi() override;

  QueryResult query(const std::string& promql, Clock::time_point at,
                    std::chrono::milliseconds timeout) override;
  std::shared_ptr<const QueryResult> sharedQuery(const std::string& promql, Clock::time_point at,
                                                 std::chrono::milliseconds timeout) override;
  // Passes straight through: range queries (forecast history) are rare, long and seldom
  // identical, so sharing them would only hold answers of megabytes in memory.
  RangeResult queryRange(const std::string& promql, Clock::time_point start, Clock::time_point end,
                         std::chrono::milliseconds step,
                         std::chrono::milliseconds timeout) override;
  void series(const std::string& selector, Clock::time_point start,
              std::chrono::milliseconds timeout, const SeriesVisitor& visitor) override;

  // How queries were answered so far.
  struct Stats {
    std::size_t called = 0;  // sent to the wrapped API
    std::size_t joined = 0;  // waited for an identical query in flight (counted on arrival)
    std::size_t cached = 0;  // served a remembered answer
  };
  Stats stats() const;

 private:
  struct Flight;
  struct Answer {
    std::string promql;
    std::chrono::milliseconds evaluated_at;  // since the epoch
    std::shared_ptr<const QueryResult> result;
  };

  std::shared_ptr<const QueryResult> lead(const std::string& promql, Clock::time_point at,
                                          std::chrono::milliseconds timeout,
                                          const std::shared_ptr<Flight>& flight);
  // Ends the flight: no longer in flight, its answer remembered (when it has one) and handed to
  // its waiters. A null `result` is a failure, described by flight.failure.
  void finish(const std::string& promql, Clock::time_point at, Flight& flight,
              std::shared_ptr<const QueryResult> result);
  static std::shared_ptr<const QueryResult> join(const Flight& flight,
                                                 std::chrono::milliseconds timeout);
  // Requires mutex_: an answer that serves `at_ms`, dropping answers too old to serve anything.
  std::shared_ptr<const QueryResult> cachedAnswer(const std::string& promql,
                                                  std::chrono::milliseconds at_ms);
  void remember(Answer answer);  // requires mutex_
  void forgetOldest();           // requires mutex_

  std::shared_ptr<PrometheusApi> inner_;
  CoalescingOptions options_;
  mutable std::mutex mutex_;
  Stats stats_;
  std::map<std::string, std::shared_ptr<Flight>, std::less<>> in_flight_;
  std::list<Answer> answers_;                                                       // oldest first
  std::unordered_map<std::string_view, std::list<Answer>::iterator> answer_index_;  // by PromQL
};

}  // namespace metrics_adapter::prometheus
