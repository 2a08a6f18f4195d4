#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "metrics_adapter/forecast/backtest.h"

namespace metrics_adapter::forecast {

// One series of a forecastRule, replayed.
// A simple method replayed on the same steps as the served forecast, for comparison.
struct BaselineReplay {
  Method method = Method::kLatestValue;
  BacktestResult replay;
};

struct ObservedSeries {
  std::map<std::string, std::string> labels;
  Method method = Method::kLatestValue;  // what serves at the end of the history
  std::string why;                       // why (Forecast::why there)
  std::string sampling;                  // the series' own spacing (samplingText)
  BacktestResult replay;                 // the served forecast, replayed
  // How many replayed steps each method served (the selection is made again every hour).
  std::map<Method, std::size_t> served_steps;
  std::vector<BaselineReplay> baselines;  // latest value, seasonal naive, Holt-Winters
  // Where the served latest value comes from and how old it is, and the series' first
  // selection (the server fills it in; empty: no row).
  std::string freshness;
};

// The simple method with the lowest MAPE on the replayed steps; null when none was replayed.
const BaselineReplay* bestBaseline(const ObservedSeries& series);

struct ObserverPageData {
  std::string rule;                                  // the forecastRule's name
  std::chrono::system_clock::time_point first_time;  // time of replay index 0
  std::chrono::seconds step{60};
  std::chrono::seconds horizon{600};
  // The HPA's target averageValue for the forecast metric: when given, the page also plots the
  // replicas the forecast implies (ceil(forecast / target)) against the replicas a reactive HPA
  // would have used (ceil(actual / target)).
  std::optional<double> target;
  std::vector<ObservedSeries> series;
  // Shown in the header when given; the page has no clock of its own, so the same data always
  // renders the same bytes.
  std::optional<std::chrono::system_clock::time_point> generated_at;
};

// A self-contained HTML page (inline SVG and CSS, no script, nothing fetched): per series,
// actual vs forecast over the replayed time and, with a target, actual vs forecast replicas,
// with the backtest figures. Label values and names are HTML-escaped. Deterministic. Long series
// are drawn at most 1500 points per line, each the maximum of its time bucket, so peaks stay
// visible and a 7-day page at a 1-minute step stays near 100 KB per series.
std::string renderObserverPage(const ObserverPageData& data);

// A series' labels in PromQL's notation, {a="1", b="x\"y"}, so a reader can paste them into a
// query; "{} (no labels)" for none. For the page, explain and the forecast command.
std::string labelSetText(const std::map<std::string, std::string>& labels);

}  // namespace metrics_adapter::forecast
