#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "metrics_adapter/prometheus/backend_set.h"
#include "metrics_adapter/prometheus/prometheus_api.h"

namespace metrics_adapter::testing {

// A PrometheusApi that serves series from a table and answers queries and range queries with
// functions, recording every call.
class FakePrometheus : public prometheus::PrometheusApi {
 public:
  struct Series {
    std::string name;
    std::vector<std::string> label_names;
  };

  // One queryRange call as it was made.
  struct RangeCall {
    std::string promql;
    prometheus::Clock::time_point start;
    prometheus::Clock::time_point end;
    std::chrono::milliseconds step;
  };

  std::map<std::string, std::vector<Series>> series_by_selector;
  std::map<std::string, std::string> failing_selectors;  // selector -> error message
  std::function<prometheus::QueryResult(const std::string&)> answer = [](const std::string&) {
    return prometheus::QueryResult{};
  };
  // Answers queryRange; an exception it throws reaches the caller.
  std::function<prometheus::RangeResult(const RangeCall&)> range_answer = [](const RangeCall&) {
    return prometheus::RangeResult{};
  };

  prometheus::QueryResult query(const std::string& promql, prometheus::Clock::time_point,
                                std::chrono::milliseconds) override {
    {
      std::lock_guard lock(mutex_);
      queries.push_back(promql);
    }
    return answer(promql);
  }

  prometheus::RangeResult queryRange(const std::string& promql, prometheus::Clock::time_point start,
                                     prometheus::Clock::time_point end,
                                     std::chrono::milliseconds step,
                                     std::chrono::milliseconds) override {
    RangeCall call{promql, start, end, step};
    {
      std::lock_guard lock(mutex_);
      range_calls.push_back(call);
    }
    return range_answer(call);
  }

  void series(const std::string& selector, prometheus::Clock::time_point, std::chrono::milliseconds,
              const prometheus::SeriesVisitor& visitor) override {
    {
      std::lock_guard lock(mutex_);
      series_calls.push_back(selector);
      auto failing = failing_selectors.find(selector);
      if (failing != failing_selectors.end()) {
        throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kUnreachable, 0,
                                          failing->second);
      }
    }
    for (const auto& s : series_by_selector[selector]) {
      std::vector<std::string_view> names(s.label_names.begin(), s.label_names.end());
      visitor(s.name, names);
    }
  }

  // series() calls so far, safe to read while other threads call.
  std::size_t seriesCallCount() {
    std::lock_guard lock(mutex_);
    return series_calls.size();
  }

  std::vector<std::string> queries;
  std::vector<std::string> series_calls;
  std::vector<RangeCall> range_calls;

 private:
  std::mutex mutex_;
};

inline prometheus::Sample sample(std::map<std::string, std::string> labels, double value,
                                 double timestamp = 1714564800) {
  return prometheus::Sample{std::move(labels), value, timestamp};
}

// `api` as the backend "default", for code that takes a prometheus::Backend.
inline prometheus::Backend asBackend(std::shared_ptr<prometheus::PrometheusApi> api) {
  prometheus::Backend backend;
  backend.name = "default";
  backend.api = std::move(api);
  return backend;
}

// `api` as the only backend of a ForecastService.
inline std::function<std::shared_ptr<const prometheus::BackendSet>()> onlyBackend(
    std::shared_ptr<prometheus::PrometheusApi> api) {
  return [set = prometheus::BackendSet::single(std::move(api))] { return set; };
}

}  // namespace metrics_adapter::testing
