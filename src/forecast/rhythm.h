#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>

// Detection of a daily or weekly rhythm in a history, the first step of the forecast model
// (docs/forecasting.md, "How the model works").
namespace metrics_adapter::forecast::rhythm {

inline constexpr std::chrono::seconds kDay{24 * 3600};
inline constexpr std::chrono::seconds kWeek{7 * 24 * 3600};

// A rhythm is accepted when the autocorrelation at its period is at least this...
inline constexpr double kMinAutocorrelation = 0.3;
// ...and at least this many standard errors of a rhythm-free series (1/sqrt(pairs)).
inline constexpr double kSignificanceSigmas = 3.0;
// A daily rhythm repeats at one week too: a weekly rhythm must correlate this much better at one
// week than at one day (weekends unlike weekdays).
inline constexpr double kWeeklyGain = 0.1;

struct RhythmScore {
  std::chrono::seconds period{0};
  double autocorrelation = 0;  // Pearson correlation of the detrended series at lag `period`
  std::size_t pairs = 0;       // pairs of downsampled values behind it
  bool accepted = false;
};

struct RhythmReport {
  std::optional<RhythmScore> daily;   // scored when the history holds 2 days
  std::optional<RhythmScore> weekly;  // scored when the history holds 2 weeks
  // With `weekly`: the autocorrelation of the same (weekly detrended) series at one day.
  double weekly_series_at_one_day = 0;
  std::optional<RhythmScore> chosen;  // the accepted weekly rhythm, else the accepted daily one
};

// Scores the daily and weekly candidates of `history` (one value per `step`, oldest first, NaN
// for gaps): the series is averaged into 10-minute buckets, detrended by a centred moving
// average one period long (shortened at the ends), and correlated with itself one period later.
// Deterministic; linear in the history's length.
RhythmReport detectRhythm(std::span<const float> history, std::chrono::seconds step);

}  // namespace metrics_adapter::forecast::rhythm
