// The forecast model (forecastAhead) against seasonal-naive and Holt-Winters: each synthetic case
// of tests/unit/forecast/synthetic_load.h is replayed over its last day, and the table of
// docs/forecasting.md ("Accuracy (bench)") is printed. Exits 1 when the model's MAPE is not below
// both baselines' on every case.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "metrics_adapter/forecast/backtest.h"
#include "metrics_adapter/forecast/baselines.h"
#include "metrics_adapter/forecast/model.h"
#include "unit/forecast/synthetic_load.h"

namespace {

namespace fc = metrics_adapter::forecast;
namespace syn = metrics_adapter::forecast::synthetic;

constexpr std::chrono::seconds kStep{60};
constexpr int kHorizon = 10;
constexpr double kThresholdShare = 0.6;  // of the replayed day's noise-free peak

struct BenchCase {
  std::string name;
  syn::LoadShape shape;
  std::size_t days = 8;                                  // series length; the last day is replayed
  std::size_t history_days = 7;                          // history each forecast sees
  std::chrono::seconds season = std::chrono::hours(24);  // of the baselines
};

std::vector<BenchCase> benchCases() {
  std::vector<BenchCase> cases;
  syn::LoadShape noisy;
  noisy.noise = 0.05;

  BenchCase weekly{"daily + weekly rhythm, 21 days", noisy, 22, 21, std::chrono::hours(24 * 7)};
  weekly.shape.weekend_amplitude = 0.4;
  weekly.shape.first_weekday = 5;  // the replayed day 21 is a Saturday
  weekly.shape.seed = 2;
  cases.push_back(weekly);

  cases.push_back({"noisy daily, 7 days", noisy});

  BenchCase sharp{"sharp ramp (15 min), 7 days", noisy};
  sharp.shape.ramp_minutes = 15;
  sharp.shape.seed = 7;
  cases.push_back(sharp);

  BenchCase anomaly{"anomaly day (yesterday x1.8)", noisy};
  anomaly.shape.anomaly_day = 6;
  anomaly.shape.anomaly_factor = 1.8;
  anomaly.shape.seed = 3;
  cases.push_back(anomaly);

  BenchCase shift{"level shift (+30 % at 11:00)", noisy};
  shift.shape.shift_at = 7 * syn::kMinutesPerDay + 11 * syn::kMinutesPerHour;
  shift.shape.shift = 0.3 * noisy.peak;
  shift.shape.seed = 4;
  cases.push_back(shift);

  BenchCase trend{"trend (+5 % of peak a day)", noisy};
  trend.shape.trend_per_day = 0.05 * noisy.peak;
  trend.shape.seed = 5;
  cases.push_back(trend);

  BenchCase young{"new workload, 2 days", noisy, 3, 7};
  young.shape.seed = 6;
  cases.push_back(young);
  return cases;
}

struct MethodResult {
  std::string method;
  fc::BacktestResult result;
};

std::string leadText(const fc::BacktestResult& r) {
  if (!r.lead_time_seconds) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, "%+.0f min", *r.lead_time_seconds / 60);
  return text;
}

// Median over `rounds` of the mean CPU time of one forecastAhead call on `history`, in µs.
double forecastMicros(std::span<const float> history, int rounds, int calls) {
  std::vector<double> means;
  for (int round = 0; round < rounds; ++round) {
    const auto start = std::clock();
    double sink = 0;
    for (int i = 0; i < calls; ++i) {
      sink += fc::forecastAhead(history, kStep, kHorizon, {}).maximum;
    }
    const auto cpu = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
    if (sink < 0) std::puts("");  // keeps the calls
    means.push_back(cpu / calls * 1e6);
  }
  std::sort(means.begin(), means.end());
  return means[means.size() / 2];
}

}  // namespace

int main() {
  bool model_best_everywhere = true;
  std::printf(
      "| case | method | MAPE | under-forecast | median lead (threshold 60 %% of peak) |\n");
  std::printf("|---|---|---:|---:|---:|\n");
  std::vector<std::string> margins;
  for (const BenchCase& c : benchCases()) {
    const std::size_t length = c.days * syn::kMinutesPerDay;
    const std::vector<float> series = syn::generateLoad(c.shape, length);
    const std::size_t first = length - syn::kMinutesPerDay;
    fc::BacktestOptions options;
    options.step = kStep;
    options.horizon_steps = kHorizon;
    options.history_steps = c.history_days * syn::kMinutesPerDay;
    options.threshold =
        kThresholdShare * syn::noiseFreeMax(c.shape, first, syn::kMinutesPerDay - 1);

    const auto season = c.season;
    std::vector<MethodResult> results;
    results.push_back({"model", fc::backtest(series, first, options,
                                             fc::modelForecaster(kStep, fc::ModelOptions{}))});
    results.push_back(
        {"seasonal naive",
         fc::backtest(series, first, options, [season](std::span<const float> h, int steps) {
           return fc::seasonalNaive(h, kStep, season, steps);
         })});
    results.push_back(
        {"Holt-Winters",
         fc::backtest(series, first, options, [season](std::span<const float> h, int steps) {
           return fc::holtWinters(h, kStep, season, steps);
         })});
    for (const MethodResult& m : results) {
      std::printf("| %s | %s | %.1f %% | %.1f %% | %s |\n", c.name.c_str(), m.method.c_str(),
                  m.result.mape * 100, m.result.under_forecast_ratio * 100,
                  leadText(m.result).c_str());
    }
    const double model = results[0].result.mape;
    const double best_baseline = std::min(results[1].result.mape, results[2].result.mape);
    if (!(model < best_baseline)) model_best_everywhere = false;
    char line[200];
    std::snprintf(
        line, sizeof line, "%s: model %.2f %% vs seasonal naive %.2f %%, Holt-Winters %.2f %%",
        c.name.c_str(), model * 100, results[1].result.mape * 100, results[2].result.mape * 100);
    margins.emplace_back(line);
  }

  syn::LoadShape noisy;
  noisy.noise = 0.05;
  const std::vector<float> week = syn::generateLoad(noisy, 7 * syn::kMinutesPerDay);
  std::printf("\nCPU per forecast (10080 points, horizon %d): %.0f µs (median of 7 rounds)\n",
              kHorizon, forecastMicros(week, 7, 200));
  std::printf("\n");
  for (const std::string& m : margins) std::printf("%s\n", m.c_str());
  std::printf("model MAPE below both baselines on every case: %s\n",
              model_best_everywhere ? "yes" : "NO");
  return model_best_everywhere ? 0 : 1;
}
