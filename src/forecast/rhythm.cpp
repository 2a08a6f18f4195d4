#include "forecast/rhythm.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace metrics_adapter::forecast::rhythm {
namespace {

constexpr std::chrono::seconds kBucket{600};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Means of `bucket` consecutive values, the buckets aligned on the history's end (a partial
// bucket at the start is dropped); NaN for a bucket without a finite value.
std::vector<double> rhythmBucketMeans(std::span<const float> history, std::size_t bucket) {
  const std::size_t count = history.size() / bucket;
  const std::size_t offset = history.size() - count * bucket;
  std::vector<double> means(count, kNaN);
  for (std::size_t i = 0; i < count; ++i) {
    double sum = 0;
    std::size_t finite = 0;
    for (std::size_t k = 0; k < bucket; ++k) {
      const float v = history[offset + i * bucket + k];
      if (std::isfinite(v)) {
        sum += v;
        ++finite;
      }
    }
    if (finite > 0) means[i] = sum / static_cast<double>(finite);
  }
  return means;
}

// x minus its centred moving average over `window` values (fewer at the ends, where the window
// is cut by the series' bounds), NaN stays NaN. Removes trends and level shifts, keeps the
// rhythms shorter than the window.
std::vector<double> rhythmDetrend(const std::vector<double>& x, std::size_t window) {
  const std::size_t n = x.size();
  std::vector<double> prefix_sum(n + 1, 0);
  std::vector<std::size_t> prefix_count(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const bool finite = std::isfinite(x[i]);
    prefix_sum[i + 1] = prefix_sum[i] + (finite ? x[i] : 0);
    prefix_count[i + 1] = prefix_count[i] + (finite ? 1 : 0);
  }
  const std::size_t half = window / 2;
  std::vector<double> z(n, kNaN);
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) continue;
    const std::size_t lo = i >= half ? i - half : 0;
    const std::size_t hi = std::min(n, i + half + 1);
    const std::size_t count = prefix_count[hi] - prefix_count[lo];
    z[i] = x[i] - (prefix_sum[hi] - prefix_sum[lo]) / static_cast<double>(count);
  }
  return z;
}

// Pearson correlation of z[i] and z[i + lag] over the pairs where both are finite.
RhythmScore rhythmAutocorrelation(const std::vector<double>& z, std::size_t lag) {
  RhythmScore score;
  double sum_a = 0;
  double sum_b = 0;
  for (std::size_t i = 0; i + lag < z.size(); ++i) {
    if (!std::isfinite(z[i]) || !std::isfinite(z[i + lag])) continue;
    sum_a += z[i];
    sum_b += z[i + lag];
    ++score.pairs;
  }
  if (score.pairs < 2) return score;
  const double mean_a = sum_a / static_cast<double>(score.pairs);
  const double mean_b = sum_b / static_cast<double>(score.pairs);
  double cov = 0;
  double var_a = 0;
  double var_b = 0;
  for (std::size_t i = 0; i + lag < z.size(); ++i) {
    if (!std::isfinite(z[i]) || !std::isfinite(z[i + lag])) continue;
    const double a = z[i] - mean_a;
    const double b = z[i + lag] - mean_b;
    cov += a * b;
    var_a += a * a;
    var_b += b * b;
  }
  // A constant series has no rhythm (and no correlation).
  if (var_a <= 0 || var_b <= 0) return score;
  score.autocorrelation = cov / std::sqrt(var_a * var_b);
  return score;
}

bool rhythmSignificant(const RhythmScore& score, std::size_t period_buckets) {
  if (score.pairs < period_buckets / 2) return false;
  const double noise_level = kSignificanceSigmas / std::sqrt(static_cast<double>(score.pairs));
  return score.autocorrelation >= std::max(kMinAutocorrelation, noise_level);
}

}  // namespace

RhythmReport detectRhythm(std::span<const float> history, std::chrono::seconds step) {
  RhythmReport report;
  if (step.count() <= 0) return report;
  const auto bucket = static_cast<std::size_t>(
      std::max<std::int64_t>(1, std::llround(double(kBucket.count()) / double(step.count()))));
  const auto bucket_seconds = static_cast<double>(bucket) * static_cast<double>(step.count());
  const auto day = static_cast<std::size_t>(std::llround(double(kDay.count()) / bucket_seconds));
  // Fewer than 4 buckets a day cannot show a shape.
  if (day < 4) return report;
  const std::size_t week = 7 * day;
  const std::vector<double> x = rhythmBucketMeans(history, bucket);

  if (x.size() >= 2 * day) {
    RhythmScore daily = rhythmAutocorrelation(rhythmDetrend(x, day), day);
    daily.period = kDay;
    daily.accepted = rhythmSignificant(daily, day);
    report.daily = daily;
  }
  if (x.size() >= 2 * week) {
    const std::vector<double> z = rhythmDetrend(x, week);
    RhythmScore weekly = rhythmAutocorrelation(z, week);
    weekly.period = kWeek;
    report.weekly_series_at_one_day = rhythmAutocorrelation(z, day).autocorrelation;
    weekly.accepted = rhythmSignificant(weekly, week) &&
                      weekly.autocorrelation >= report.weekly_series_at_one_day + kWeeklyGain;
    report.weekly = weekly;
  }
  if (report.weekly && report.weekly->accepted) {
    report.chosen = report.weekly;
  } else if (report.daily && report.daily->accepted) {
    report.chosen = report.daily;
  }
  return report;
}

}  // namespace metrics_adapter::forecast::rhythm
