#include "app/explain_forecast.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>

#include "metrics_adapter/api/custom_metrics_handler.h"
#include "metrics_adapter/forecast/forecast_service.h"
#include "metrics_adapter/forecast/observer_page.h"
#include "metrics_adapter/forecast/selection.h"
#include "metrics_adapter/promql/label_selector.h"

namespace metrics_adapter::app {
namespace {

void printForecastRule(std::ostream& out, const config::ForecastRule& rule) {
  out << "forecastRule " << rule.name << ":\n"
      << "  query: " << rule.query << "\n"
      << "  history " << rule.history.count() << "s, step " << rule.step.count() << "s, horizon "
      << rule.horizon.count() << "s, refreshInterval " << rule.refresh_interval.count()
      << "s, quantile " << rule.quantile << "\n";
  out << "  namespaces: ";
  if (rule.namespaces.empty()) out << "every namespace";
  for (std::size_t i = 0; i < rule.namespaces.size(); ++i) {
    out << (i ? ", " : "") << rule.namespaces[i];
  }
  out << "\n";
}

std::string percentText(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  std::ostringstream text;
  text << std::fixed << std::setprecision(1) << fraction * 100 << " %";
  return text.str();
}

// The series' own spacing (and, for a series forecast on its own samples, when the next one is
// due against the window served now), and a warning when the rule's step is finer than the data.
void printSampling(std::ostream& out, const config::ForecastRule& rule,
                   const forecast::Forecast& forecast, std::size_t window_index) {
  const forecast::Sampling& sampling = forecast.sampling;
  if (sampling.samples == 0) return;
  out << "      sampling: "
      << forecast::servedSamplingText(forecast, rule.step,
                                      static_cast<int>(rule.horizon / rule.step), window_index)
      << "\n";
  if (sampling.spacing_steps > 1) {
    out << "      warning: step " << rule.step.count() << "s is finer than the data (a new value "
        << "every " << sampling.spacing_steps * static_cast<std::size_t>(rule.step.count())
        << "s): the forecast counts one independent value per sample\n";
  }
}

}  // namespace

int explainForecast(std::ostream& out, const ExplainOptions& options,
                    const config::ForecastRule& rule, const prometheus::Backend& backend) {
  printForecastRule(out, rule);
  out << "backend: " << backend.name << " (" << backend.url << ")\n";
  if (!options.namespace_name.empty() && !rule.namespaces.empty() &&
      std::find(rule.namespaces.begin(), rule.namespaces.end(), options.namespace_name) ==
          rule.namespaces.end()) {
    out << "answer: 404: not served in namespace " << options.namespace_name << "\n";
    return 2;
  }
  promql::LabelSelector selector;
  try {
    selector = promql::parseLabelSelector(options.metric_selector);
  } catch (const promql::SelectorError& e) {
    out << "answer: 400: invalid labelSelector: " << e.what() << "\n";
    return 2;
  }

  auto backends = std::make_shared<const prometheus::BackendSet>(
      std::vector<std::shared_ptr<const prometheus::Backend>>{
          std::make_shared<const prometheus::Backend>(backend)});
  forecast::ForecastService service(
      [backends] { return backends; },
      // explain runs once: every series' selection now, none left pending.
      forecast::ForecastServiceOptions{
          .query_timeout = options.shared.query_timeout,
          .first_selections_per_refresh = std::numeric_limits<std::size_t>::max()});
  const forecast::Clock::time_point now = forecast::Clock::now();
  service.refresh({rule}, now);
  const forecast::RuleStatus status = service.status(rule.name);
  out << "history: " << status.queries << " query_range calls";
  if (!status.last_error.empty()) {
    out << " failed: " << status.last_error << "\nanswer: 503: the forecast is not ready\n";
    return 2;
  }
  const auto forecasts = service.forecasts(rule.name);
  // The window an HPA reading now is served, as the external metrics handler computes it.
  const forecast::ServedWindow window = forecast::servedWindow(*forecasts, now);
  const auto seconds_of = [](forecast::Clock::time_point t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
  };
  out << ", " << forecasts->series.size() << " series; last step read "
      << api::formatTimestamp(seconds_of(forecasts->computed_at)) << ", served window ["
      << api::formatTimestamp(seconds_of(window.start)) << ", "
      << api::formatTimestamp(seconds_of(window.end)) << "]\n";
  std::size_t served = 0;
  for (const forecast::SeriesForecast& series : forecasts->series) {
    const bool selected = promql::matches(selector, series.labels);
    served += selected ? 1 : 0;
    const forecast::Forecast& chosen = series.forecast;
    out << "  " << forecast::labelSetText(series.labels) << (selected ? "" : " (not selected)")
        << ": latest " << series.latest << ", serves " << forecast::servedValue(series, window)
        << " (" << forecast::methodTitle(chosen.method) << ", " << forecast::servedValueRule(chosen)
        << "); " << chosen.why << "\n";
    printSampling(out, rule, chosen, window.index);
    for (const forecast::MethodScore& score : chosen.scores) {
      out << "      " << forecast::methodTitle(score.method) << ": MAPE " << percentText(score.mape)
          << ", under-forecast " << percentText(score.under_forecast_ratio) << " over "
          << score.points << " steps" << (score.method == chosen.method ? " <- serves" : "")
          << "\n";
    }
  }
  out << "answer: 200: " << served << " items\n";
  return 0;
}

}  // namespace metrics_adapter::app
