#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "metrics_adapter/forecast/baselines.h"
#include "metrics_adapter/forecast/model.h"
#include "metrics_adapter/forecast/sampling.h"

// Which method serves a series (docs/forecasting.md, "Which method serves"): the rhythm model,
// Holt-Winters, the seasonal naive methods and the latest value are each replayed on the series'
// own recent steps, and the one with the lowest error serves. Whatever serves is never below the
// latest actual value: the served value is the maximum over [now, now + horizon], and now is
// already known.
namespace metrics_adapter::forecast {

// The simple methods and their combinations are scored at every step of the last 2 days; the
// rhythm model, whose every forecast costs as much as a served one, at one step per half hour of
// them, and it serves when it beats the choice among the others on those steps.
inline constexpr std::chrono::hours kSelectionWindow{48};
inline constexpr std::chrono::minutes kSelectionStride{30};
// ...and chosen again every hour (each series at its own minute, so that a rule's series do not
// all pay at the same refresh).
inline constexpr std::chrono::hours kSelectionPeriod{1};
// Hysteresis: the method chosen an hour earlier keeps serving unless another's error over the
// window is lower by more than this share of it.
inline constexpr double kSelectionHysteresis = 0.05;
// The latest value is the default, and the methods rank by how far they commit beyond it (see
// cautionRank): a method of the next rank serves only when its error is lower than that of what
// the ranks before chose by at least this share (demand that changes its ways must not be chased
// with yesterday's winner).
inline constexpr double kSelectionMargin = 0.1;
// The rhythm model, scored on fewer steps, must beat the choice among the others by this share.
inline constexpr double kModelMargin = 0.2;

// 0 the latest value; 1 the combinations of seasonal naive (1d) and Holt-Winters, which rise
// above it only as far as both methods expect (the lower) or on average (the mean); 2 one simple
// method on its own; 3 the rhythm model. On real demand the combinations were the steadiest
// improvement on the latest value (docs/forecasting.md, "Which method serves").
int cautionRank(Method method);

// A seasonal naive method of one week is a candidate once this much history exists.
inline constexpr std::chrono::hours kWeeklyCandidateHistory{8 * 24};

struct Selection {
  Method method = Method::kLatestValue;
  std::string why;                     // one line: what serves and why
  std::vector<MethodScore> scores;     // every candidate's figures over the window, best first
  Sampling sampling;                   // the series' own spacing, as the history shows it
  HoltWintersParameters holt_winters;  // fitted at the selection, used until the next one
  // A series sampled more coarsely than the horizon: at most one new sample lands in a window,
  // and only in some windows. The method is chosen (and Holt-Winters fitted) on its own samples,
  // one value per sample (nativeSamples), forecasting the next sample from each; forecastWith
  // serves that forecast to a window that holds the next sample's due time, the latest value to
  // one that does not.
  bool on_samples = false;
};

// Chooses the method for a series whose history ends at its last index. Pure: the same history
// gives the same selection on every replica. `lag_steps`: each method is scored as it would be
// served, made that many steps before the window it serves (servingLagSteps).
Selection selectMethod(std::span<const float> history, std::chrono::seconds step, int horizon_steps,
                       const ModelOptions& options, int lag_steps = 0);

// The forecast of `method` as `selection` chose it, at the history's end, raised to at least
// the latest actual value; why and scores from the selection. `lead_steps`: how many steps past
// the history's end the served window may start (Forecast::windows has lead_steps + 1 values).
Forecast forecastWith(const Selection& selection, std::span<const float> history,
                      std::chrono::seconds step, int horizon_steps, const ModelOptions& options,
                      int lead_steps = 0);

// What a read serves for the window that starts `window_index` steps after the history's end,
// knowing `latest`, the series' value at the read (its fresh instant query; NaN when there is
// none): the latest value for that method, else the window's forecast raised to it (a
// combination raises each of its parts first). Without `latest`, Forecast::windows as the
// refresh made them (raised to the history's last value for the first window only). A series
// forecast on its own samples serves its windows as they are unless it serves the latest value.
double servedAt(const Forecast& forecast, std::size_t window_index, double latest);

// For a series forecast on its own samples, the window that starts `window_index` steps after
// the history's end: when the next sample is due and what serves, e.g. "next sample due in 7m,
// inside the 10m window: forecast by Holt-Winters (1d season)" or "next sample due in 22m,
// after the 10m window: serving the latest value"; "" for another series.
std::string nextSampleText(const Forecast& forecast, std::chrono::seconds step, int horizon_steps,
                           std::size_t window_index);

// How a window's value is made from the forecast, for explain: "max over the horizon, never
// below the latest", or for a series forecast on its own samples "a sample due in the window:
// its forecast; else the value in force at the window's start".
std::string servedValueRule(const Forecast& forecast);

// samplingText of the forecast's sampling, followed by nextSampleText when there is one: the
// sampling line of explain, the backtest and the observer page.
std::string servedSamplingText(const Forecast& forecast, std::chrono::seconds step,
                               int horizon_steps, std::size_t window_index);

// The latest value, for a series whose first selection has not run yet (the server's background
// worker makes them after the first fetch, so that no refresh pays them).
Forecast pendingForecast(std::span<const float> history, int horizon_steps, int lead_steps);

// One series' forecasts over time: the selection is made every kSelectionPeriod (at the series'
// own minute, from the history up to that time) and reused until the next. Deterministic for a
// given history and grid, whenever the forecaster was created.
class SelectingForecaster {
 public:
  // `labels`: the series' labels, which set its minute within the period; `lag_steps` as for
  // selectMethod.
  SelectingForecaster(std::chrono::seconds step, int horizon_steps, ModelOptions options,
                      const std::map<std::string, std::string>& labels, int lag_steps = 0);

  // Whether a series that has never been selected must be selected at this forecast.
  enum class FirstSelection {
    kNow,
    // Not before the series' own minute within the period: until then (or until a later call
    // says kNow) it serves pendingForecast. What the selection chooses does not depend on when it
    // runs, only on the history up to its hour.
    kAtItsMinute,
  };

  // `history` ends at grid step `last_step` (steps of `step` since the epoch) and holds at most
  // the rule's history; `lead_steps` as for forecastWith.
  Forecast forecast(std::span<const float> history, std::int64_t last_step, int lead_steps = 0,
                    FirstSelection first = FirstSelection::kNow);

  // The selection in force after the last forecast(); nullopt before the first.
  const std::optional<Selection>& selection() const { return selection_; }

 private:
  std::chrono::seconds step_;
  int horizon_steps_;
  int lag_steps_;
  ModelOptions options_;
  std::int64_t period_steps_;
  std::int64_t offset_steps_;
  std::int64_t selected_at_ = 0;
  std::optional<std::int64_t> pending_at_;  // the selection time a deferred first one waited at
  std::optional<Selection> selection_;
};

}  // namespace metrics_adapter::forecast
