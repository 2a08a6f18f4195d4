#pragma once

// Synthetic per-minute GPU demand (e.g. the sum of GPU utilisation of a Deployment's pods) whose
// generating function the tests and bench/forecast_bench.cpp know: a daily rhythm (night low,
// morning ramp, day plateau with a lunch dip, evening decline), optionally a weekly one
// (weekends lower), seeded noise, an anomalous day, a level shift, a linear trend and gaps.
// Deterministic on every platform: the noise uses its own generator, not <random>'s
// distributions, whose output the standard leaves to the library.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <optional>
#include <utility>
#include <vector>

namespace metrics_adapter::forecast::synthetic {

inline constexpr std::size_t kMinutesPerHour = 60;
inline constexpr std::size_t kMinutesPerDay = 24 * kMinutesPerHour;
inline constexpr std::size_t kMinutesPerWeek = 7 * kMinutesPerDay;

// Index 0 is midnight of day 0, one value per minute.
struct LoadShape {
  double night = 80;      // demand at night
  double peak = 400;      // demand on the day plateau (before lunch dip, weekend, anomaly...)
  int first_weekday = 0;  // weekday of day 0: 0 Monday ... 5 Saturday, 6 Sunday
  // Share of the day's rise above `night` left on Saturdays and Sundays (1: no weekly rhythm).
  double weekend_amplitude = 1;
  double noise = 0;  // standard deviation of the multiplicative noise (0.05: 5 %)
  std::uint64_t seed = 1;
  std::optional<std::size_t> anomaly_day;  // this whole day's demand is multiplied...
  double anomaly_factor = 2;               // ...by this
  std::optional<std::size_t> shift_at;     // from this index on, demand is raised...
  double shift = 0;                        // ...by this much
  double trend_per_day = 0;                // demand grows this much a day
  double ramp_minutes = 210;               // the morning ramp's length, from 06:00
  std::vector<std::pair<std::size_t, std::size_t>> gaps;  // [start, start + length) are NaN
};

inline double smoothStep(double u) {
  const double c = std::clamp(u, 0.0, 1.0);
  return c * c * (3 - 2 * c);
}

// The daily rhythm at `minute` of the day, from 0 (night) to 1 (plateau): night until 06:00, a
// ramp of `ramp_minutes` (to 09:30 by default), the plateau with a 10 % lunch dip around 12:30,
// a decline from 17:00 to 22:00.
inline double dailyRhythm(double minute, double ramp_minutes = 210) {
  if (minute < 360) return 0;
  if (minute < 360 + ramp_minutes) return smoothStep((minute - 360) / ramp_minutes);
  if (minute < 570) return 1;
  if (minute < 1020) {
    const double lunch = (minute - 750) / 40;
    return 1 - 0.1 * std::exp(-lunch * lunch);
  }
  if (minute < 1320) return 1 - smoothStep((minute - 1020) / 300);
  return 0;
}

// The demand at `index` without noise or gaps.
inline double noiseFree(const LoadShape& shape, std::size_t index) {
  const std::size_t day = index / kMinutesPerDay;
  const auto minute = static_cast<double>(index % kMinutesPerDay);
  const auto weekday = (static_cast<std::size_t>(shape.first_weekday) + day) % 7;
  const double amplitude =
      (shape.peak - shape.night) * (weekday >= 5 ? shape.weekend_amplitude : 1.0);
  double value = shape.night + amplitude * dailyRhythm(minute, shape.ramp_minutes);
  if (shape.anomaly_day && *shape.anomaly_day == day) value *= shape.anomaly_factor;
  if (shape.shift_at && index >= *shape.shift_at) value += shape.shift;
  value += shape.trend_per_day * static_cast<double>(index) / kMinutesPerDay;
  return std::max(0.0, value);
}

// The maximum of noiseFree over [from, from + steps].
inline double noiseFreeMax(const LoadShape& shape, std::size_t from, std::size_t steps) {
  double result = noiseFree(shape, from);
  for (std::size_t i = from + 1; i <= from + steps; ++i) {
    result = std::max(result, noiseFree(shape, i));
  }
  return result;
}

// SplitMix64 of (seed, index): the noise at an index does not depend on the series' length.
inline std::uint64_t mixBits(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + index + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A standard normal deviate for (seed, index) (Box-Muller).
inline double gaussian(std::uint64_t seed, std::size_t index) {
  const auto unit = [](std::uint64_t bits) {
    return (static_cast<double>(bits >> 11) + 0.5) / 9007199254740992.0;  // (0, 1)
  };
  const double u1 = unit(mixBits(seed, 2 * static_cast<std::uint64_t>(index)));
  const double u2 = unit(mixBits(seed, 2 * static_cast<std::uint64_t>(index) + 1));
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

// `length` values of the demand: noiseFree times (1 + noise * N(0, 1)), at least 0, NaN in gaps.
inline std::vector<float> generateLoad(const LoadShape& shape, std::size_t length) {
  std::vector<float> values(length);
  for (std::size_t i = 0; i < length; ++i) {
    const double noisy = noiseFree(shape, i) * (1 + shape.noise * gaussian(shape.seed, i));
    values[i] = static_cast<float>(std::max(0.0, noisy));
  }
  for (const auto& [start, gap_length] : shape.gaps) {
    for (std::size_t i = start; i < std::min(length, start + gap_length); ++i) {
      values[i] = std::numeric_limits<float>::quiet_NaN();
    }
  }
  return values;
}

}  // namespace metrics_adapter::forecast::synthetic
