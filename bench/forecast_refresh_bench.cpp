// What keeping forecasts costs the adapter (docs/forecasting.md "Cost"): 1,000 forecast series
// (10 forecastRules of 100 series) at a 1-minute step over 7 days, served by an in-process
// Prometheus. Prints the first fetch's CPU (and how many series it left with their first
// selection pending), the refreshes of the first hour while those selections run (each series'
// at its own minute, some ahead of it), the median CPU of a steady refresh after that hour (every
// rule due, one new step each), the RSS growth after the first fetch and over the steady
// refreshes, and the query_range calls per series per refresh.
//   forecast_refresh_bench [--series-per-rule 100] [--rules 10] [--refreshes 10]
//                          [--warmup-minutes 60]

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "metrics_adapter/forecast/forecast_service.h"

namespace {

using metrics_adapter::forecast::Clock;
namespace prometheus = metrics_adapter::prometheus;

// A Prometheus whose every query returns `series` daily waves, each at its own phase.
class WavePrometheus : public prometheus::PrometheusApi {
 public:
  explicit WavePrometheus(int series) : series_(series) {}

  prometheus::QueryResult query(const std::string&, Clock::time_point,
                                std::chrono::milliseconds) override {
    return {};
  }
  void series(const std::string&, Clock::time_point, std::chrono::milliseconds,
              const prometheus::SeriesVisitor&) override {}

  prometheus::RangeResult queryRange(const std::string& promql, Clock::time_point start,
                                     Clock::time_point end, std::chrono::milliseconds step,
                                     std::chrono::milliseconds) override {
    ++calls;
    prometheus::RangeResult result;
    for (int s = 0; s < series_; ++s) {
      prometheus::RangeSeries one;
      one.labels = {{"rule", promql}, {"pod", "pod-" + std::to_string(s)}};
      for (auto t = start; t <= end; t += step) {
        const double seconds = std::chrono::duration<double>(t.time_since_epoch()).count();
        one.times.push_back(seconds);
        one.values.push_back(50 + 30 * std::sin(seconds / 86400 * 2 * 3.14159265 + s) +
                             std::fmod(seconds * 7.3 + s, 5.0));
      }
      result.series.push_back(std::move(one));
    }
    return result;
  }

  std::atomic<long> calls{0};

 private:
  int series_;
};

double cpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

long rssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

int intFlag(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::stoi(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int per_rule = intFlag(argc, argv, "--series-per-rule", 100);
  const int rule_count = intFlag(argc, argv, "--rules", 10);
  const int refreshes = intFlag(argc, argv, "--refreshes", 10);
  const int warmup_minutes = intFlag(argc, argv, "--warmup-minutes", 60);

  auto prometheus = std::make_shared<WavePrometheus>(per_rule);
  const auto backends = metrics_adapter::prometheus::BackendSet::single(prometheus);
  metrics_adapter::forecast::ForecastService service([backends] { return backends; }, {});
  std::vector<metrics_adapter::config::ForecastRule> rules;
  for (int r = 0; r < rule_count; ++r) {
    metrics_adapter::config::ForecastRule rule;
    rule.name = "forecast_" + std::to_string(r);
    rule.query = "demand_" + std::to_string(r);
    rules.push_back(rule);
  }

  const long rss_start = rssKib();
  Clock::time_point now = Clock::time_point(std::chrono::seconds(1'790'000'017));
  const double cpu = cpuSeconds();
  service.refresh(rules, now);
  const double first_cpu = cpuSeconds() - cpu;
  const long first_calls = prometheus->calls.exchange(0);
  const long rss_after_first = rssKib();
  const auto pending = [&service, &rules] {
    int count = 0;
    for (const auto& rule : rules) {
      for (const auto& one : service.forecasts(rule.name)->series) {
        count += one.forecast.why.starts_with("selection pending") ? 1 : 0;
      }
    }
    return count;
  };
  const int pending_after_first = pending();

  // `count` refreshes a minute apart; the CPU of each.
  const auto refreshMinutes = [&service, &rules, &now](int count) {
    std::vector<double> cpu_each;
    for (int i = 0; i < count; ++i) {
      now += std::chrono::minutes(1);
      const double before = cpuSeconds();
      service.refresh(rules, now);
      cpu_each.push_back(cpuSeconds() - before);
    }
    return cpu_each;
  };
  std::vector<double> warmup_cpu = refreshMinutes(warmup_minutes);
  const int pending_after_warmup = pending();
  prometheus->calls.store(0);
  const long rss_before_steady = rssKib();

  std::vector<double> refresh_cpu = refreshMinutes(refreshes);
  const long rss_end = rssKib();
  std::sort(refresh_cpu.begin(), refresh_cpu.end());
  const double series = static_cast<double>(per_rule) * rule_count;

  std::printf("%d series (%d rules x %d), 7 days at 1m\n", per_rule * rule_count, rule_count,
              per_rule);
  std::printf(
      "first fetch: %.2f CPU s, %ld query_range calls, %d series' first selection "
      "pending\n",
      first_cpu, first_calls, pending_after_first);
  if (!warmup_cpu.empty()) {
    double total = 0;
    for (const double one : warmup_cpu) total += one;
    std::sort(warmup_cpu.begin(), warmup_cpu.end());
    std::printf(
        "first %d minutes: %.2f CPU s in all, median %.3f, max %.3f per refresh; %d "
        "still pending after them\n",
        warmup_minutes, total, warmup_cpu[warmup_cpu.size() / 2], warmup_cpu.back(),
        pending_after_warmup);
  }
  std::printf("steady refresh: median %.3f CPU s (min %.3f, max %.3f) over %d refreshes\n",
              refresh_cpu[refresh_cpu.size() / 2], refresh_cpu.front(), refresh_cpu.back(),
              refreshes);
  std::printf("query_range calls per series per refresh: %.3f\n",
              static_cast<double>(prometheus->calls.load()) / (series * refreshes));
  std::printf("RSS: %.1f MiB after the first fetch (+%.1f MiB), %+.1f MiB over the refreshes\n",
              rss_after_first / 1024.0, (rss_after_first - rss_start) / 1024.0,
              (rss_end - rss_before_steady) / 1024.0);
  return 0;
}
