#include "cli/explain/explain_forecast.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
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

namespace metrics_adapter::cli {
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

// Where the served latest value comes from and how old it is: the rule's fresh read (an
// instant query, as a normal rule's answer) when there is one, else the history's last step.
std::string freshReadText(const forecast::FreshValues* fresh, const forecast::RuleStatus& status,
                          forecast::Clock::time_point computed_at,
                          forecast::Clock::time_point now) {
  const auto age = [now](forecast::Clock::time_point t) {
    return fmt::format("{:.1f} s", std::chrono::duration<double>(now - t).count());
  };
  const auto seconds_of = [](forecast::Clock::time_point t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
  };
  if (fresh == nullptr) {
    return "latest values: from the last step read (information age " + age(computed_at) +
           "): the fresh read failed" +
           (status.fresh_error.empty() ? std::string() : " (" + status.fresh_error + ")");
  }
  return "latest values: instant query at " + api::formatTimestamp(seconds_of(fresh->read_at)) +
         " (information age " + age(fresh->read_at) +
         " + Prometheus's own, at most a scrape interval; the history's last step " +
         age(computed_at) + "), read every " +
         std::to_string(std::chrono::seconds(forecast::kFreshInterval).count()) +
         " s by a server, as a normal rule's answer";
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
  const std::clock_t cpu_before = std::clock();
  service.refresh({rule}, now);
  const double refresh_cpu = static_cast<double>(std::clock() - cpu_before) / CLOCKS_PER_SEC;
  service.readFresh(now + forecast::kFreshSettle);
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
  const std::shared_ptr<const forecast::FreshValues> fresh = service.fresh(rule.name);
  out << freshReadText(fresh.get(), status, forecasts->computed_at, now) << "\n";
  // Each series' first selection, made here in the refresh, is what a server's background worker
  // makes after its first fetch, one series after another in this order.
  const double selection_cpu =
      forecasts->series.empty() ? 0 : refresh_cpu / static_cast<double>(forecasts->series.size());
  out << "first selections: " << forecasts->series.size() << " series, about "
      << fmt::format("{:.0f}", selection_cpu * 1000)
      << " ms of CPU each here (a refresh with every one); a server starting now serves each its "
         "latest value until its turn on the background worker, and reports Ready after the "
         "last\n";
  std::size_t served = 0;
  std::size_t position = 0;
  for (const forecast::SeriesForecast& series : forecasts->series) {
    const bool selected = promql::matches(selector, series.labels);
    served += selected ? 1 : 0;
    ++position;
    const forecast::Forecast& chosen = series.forecast;
    const std::optional<double> now_value = forecast::freshValue(fresh.get(), series.labels, now);
    out << "  " << forecast::labelSetText(series.labels) << (selected ? "" : " (not selected)")
        << ": latest " << (now_value ? *now_value : series.latest) << ", serves "
        << forecast::servedValue(series, window, now_value) << " ("
        << forecast::methodTitle(chosen.method) << ", " << forecast::servedValueRule(chosen)
        << "); " << chosen.why << "\n";
    out << "      first selection at a server's start: about "
        << fmt::format("{:.1f}", selection_cpu * static_cast<double>(position))
        << " s of one core after the first fetch (" << position << " of "
        << forecasts->series.size() << " in the worker's order)\n";
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

}  // namespace metrics_adapter::cli
