#include "cli/check_config/forecast_sampling_check.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstddef>

#include "metrics_adapter/forecast/forecast_service.h"
#include "metrics_adapter/forecast/observer_page.h"
#include "metrics_adapter/forecast/range_fetch.h"
#include "metrics_adapter/forecast/sampling.h"

namespace metrics_adapter::cli {

// Long enough to see a sample every hour several times, short enough for one query_range.
constexpr std::chrono::hours kSamplingLook{6};

std::vector<std::string> forecastSamplingWarnings(const config::AdapterConfig& config,
                                                  const prometheus::BackendSet& backends,
                                                  std::chrono::milliseconds timeout) {
  std::vector<std::string> warnings;
  for (std::size_t i = 0; i < config.forecast_rules.size(); ++i) {
    const config::ForecastRule& rule = config.forecast_rules[i];
    const std::string where = fmt::format("forecastRules[{}] ({})", i, rule.name);
    const prometheus::Backend* backend = backends.find(rule.backend);
    if (backend == nullptr) continue;  // named in the config's own errors
    const forecast::Clock::time_point end =
        forecast::gridTimeAtOrBefore(forecast::Clock::now(), rule.step);
    forecast::GridHistory history;
    try {
      history = forecast::fetchGridHistory(*backend->api, rule.query, end - kSamplingLook, end,
                                           rule.step, timeout);
    } catch (const prometheus::PrometheusError& e) {
      warnings.push_back(where + ": cannot read its query to check its sampling: " + e.what());
      continue;
    }
    std::size_t coarse = 0;
    std::size_t widest = 0;
    const forecast::GridSeries* example = nullptr;
    for (const forecast::GridSeries& series : history.series) {
      const forecast::Sampling sampling = forecast::analyseSampling(series.values);
      if (sampling.samples < 2 || sampling.spacing_steps <= 1) continue;
      ++coarse;
      if (sampling.spacing_steps > widest) {
        widest = sampling.spacing_steps;
        example = &series;
      }
    }
    if (coarse == 0) continue;
    const auto step = static_cast<std::size_t>(rule.step.count());
    const auto horizon = static_cast<std::size_t>(rule.horizon.count());
    std::string warning = fmt::format(
        "{}: step {}s is finer than the data: {} of {} series have a new value less often "
        "than every step (every {}s at the widest, e.g. {}); the forecast counts one "
        "independent value per sample",
        where, step, coarse, history.series.size(), widest * step,
        forecast::labelSetText(example->labels));
    if (widest * step > horizon) {
      warning += fmt::format(
          ", and a series sampled more coarsely than the horizon ({}s) is forecast on its own "
          "samples: a window that holds a sample's due time is served that sample's forecast, "
          "another the latest value",
          horizon);
    }
    warnings.push_back(std::move(warning));
  }
  return warnings;
}

}  // namespace metrics_adapter::cli
