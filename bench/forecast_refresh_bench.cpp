// What keeping forecasts costs the adapter (docs/forecasting.md "Cost"): 1,000 forecast series
// (10 forecastRules of 100 series) at a 1-minute step over 7 days, served by an in-process
// Prometheus, the service set up as the server sets it up (no first selection in a refresh).
// Prints the first fetch's CPU (and how many series it left with their first selection pending),
// the background worker's first selections (CPU and wall time on this one thread until none is
// pending, CPU per series), the median CPU of a steady refresh after that (every rule due, one
// new step each), the fresh reads' CPU per rule (the instant query's answer handed over in
// process: what the service adds to the decode), the RSS growth after the first fetch and over
// the steady refreshes, and the query_range calls per series per refresh.
//   forecast_refresh_bench [--series-per-rule 100] [--rules 10] [--refreshes 10]

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

  // The value of each series now, as an instant query answers.
  prometheus::QueryResult query(const std::string& promql, Clock::time_point at,
                                std::chrono::milliseconds) override {
    ++instant_calls;
    prometheus::QueryResult result;
    const double seconds = std::chrono::duration<double>(at.time_since_epoch()).count();
    for (int s = 0; s < series_; ++s) {
      result.samples.push_back(
          {{{"rule", promql}, {"pod", "pod-" + std::to_string(s)}}, valueAt(seconds, s), seconds});
    }
    return result;
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
        one.values.push_back(valueAt(seconds, s));
      }
      result.series.push_back(std::move(one));
    }
    return result;
  }

  std::atomic<long> calls{0};
  std::atomic<long> instant_calls{0};

 private:
  static double valueAt(double seconds, int s) {
    return 50 + 30 * std::sin(seconds / 86400 * 2 * 3.14159265 + s) +
           std::fmod(seconds * 7.3 + s, 5.0);
  }

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

double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int per_rule = intFlag(argc, argv, "--series-per-rule", 100);
  const int rule_count = intFlag(argc, argv, "--rules", 10);
  const int refreshes = intFlag(argc, argv, "--refreshes", 10);
  namespace forecast = metrics_adapter::forecast;

  auto prometheus = std::make_shared<WavePrometheus>(per_rule);
  const auto backends = metrics_adapter::prometheus::BackendSet::single(prometheus);
  forecast::ForecastService service(
      [backends] { return backends; },
      forecast::ForecastServiceOptions{.first_selections_per_refresh = 0});
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
  const std::size_t pending_after_first = service.selectionProgress().pending;

  // The server's worker, on this one thread: batches of 100 ms until none is pending.
  const double worker_cpu_start = cpuSeconds();
  const double worker_wall_start = wallSeconds();
  while (service.selectPending(std::chrono::milliseconds(100)) > 0) {
  }
  const double worker_cpu = cpuSeconds() - worker_cpu_start;
  const double worker_wall = wallSeconds() - worker_wall_start;

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
  prometheus->calls.store(0);
  const long rss_before_steady = rssKib();
  std::vector<double> refresh_cpu = refreshMinutes(refreshes);
  const long rss_end = rssKib();
  std::sort(refresh_cpu.begin(), refresh_cpu.end());
  const double series = static_cast<double>(per_rule) * rule_count;

  // Fresh reads: one per rule per evaluation time.
  constexpr int kFreshReads = 20;
  const double fresh_cpu_start = cpuSeconds();
  for (int i = 0; i < kFreshReads; ++i) service.readFresh(now + forecast::kFreshInterval * i);
  const double fresh_cpu = cpuSeconds() - fresh_cpu_start;

  std::printf("%d series (%d rules x %d), 7 days at 1m\n", per_rule * rule_count, rule_count,
              per_rule);
  std::printf(
      "first fetch: %.2f CPU s, %ld query_range calls, %zu series' first selection "
      "pending\n",
      first_cpu, first_calls, pending_after_first);
  std::printf(
      "first selections on the worker: %.1f CPU s, %.1f s wall on one thread, %.1f ms CPU per "
      "series; %zu pending after\n",
      worker_cpu, worker_wall,
      pending_after_first ? worker_cpu * 1000 / static_cast<double>(pending_after_first) : 0.0,
      service.selectionProgress().pending);
  std::printf("steady refresh: median %.3f CPU s (min %.3f, max %.3f) over %d refreshes\n",
              refresh_cpu[refresh_cpu.size() / 2], refresh_cpu.front(), refresh_cpu.back(),
              refreshes);
  std::printf("query_range calls per series per refresh: %.3f\n",
              static_cast<double>(prometheus->calls.load()) / (series * refreshes));
  std::printf(
      "fresh reads: %ld instant queries for %d evaluation times, %.3f ms CPU per rule "
      "per read (%d series a rule)\n",
      prometheus->instant_calls.load(), kFreshReads, fresh_cpu * 1000 / (kFreshReads * rule_count),
      per_rule);
  std::printf("RSS: %.1f MiB after the first fetch (+%.1f MiB), %+.1f MiB over the refreshes\n",
              rss_after_first / 1024.0, (rss_after_first - rss_start) / 1024.0,
              (rss_end - rss_before_steady) / 1024.0);
  return 0;
}
