#include "cli/forecast_command.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <system_error>
#include <vector>

#include "metrics_adapter/forecast/forecast_service.h"
#include "metrics_adapter/forecast/observer_page.h"
#include "metrics_adapter/forecast/replay.h"
#include "metrics_adapter/prometheus/prometheus_client.h"
#include "metrics_adapter/text/number.h"

namespace metrics_adapter::cli {
namespace {

using Json = nlohmann::json;

constexpr const char* kForecastUsage =
    "usage: metrics-adapter forecast backtest --config FILE --prometheus-url URL [--rule NAME]\n"
    "         [--days N] [--threshold V] [--output text|json] [the server's --prometheus-* "
    "flags]\n"
    "       metrics-adapter forecast observe --config FILE --prometheus-url URL [--rule NAME]\n"
    "         [--days N] [--target V] --output observer.html [the server's --prometheus-* "
    "flags]\n";

constexpr int kMaxDays = 35;

double positiveNumberFlag(const std::string& name, const std::string& value) {
  const std::optional<double> number = text::parseFiniteNumber(value);
  if (!number || *number <= 0) throw app::FlagError("--" + name + ": must be a positive number");
  return *number;
}

std::map<std::string, app::ToolFlag> forecastFlags(ForecastCommandOptions* options) {
  return {
      {"config",
       {.help = "the rules file",
        .apply = app::storeText(options, &ForecastCommandOptions::config_file)}},
      {"rule",
       {.help = "the forecastRule's name (default: the only one)",
        .apply = app::storeText(options, &ForecastCommandOptions::rule)}},
      {"days",
       {.help = "days to replay, 1 to 35 (default 1)",
        .apply =
            [options](const std::string& v) {
              int days = 0;
              const auto [end, error] = std::from_chars(v.data(), v.data() + v.size(), days);
              if (error != std::errc() || end != v.data() + v.size() || days < 1 ||
                  days > kMaxDays) {
                throw app::FlagError("--days: must be a whole number from 1 to 35");
              }
              options->days = days;
            }}},
      {"output",
       {.help = "backtest: text or json; observe: the HTML file to write",
        .apply = app::storeText(options, &ForecastCommandOptions::output)}},
      {"threshold",
       {.help = "backtest: the level whose upward crossings give lead times",
        .apply =
            [options](const std::string& v) {
              options->threshold = positiveNumberFlag("threshold", v);
            }}},
      {"target",
       {.help = "observe: the HPA's target averageValue, for the replicas chart",
        .apply = [options](
                     const std::string& v) { options->target = positiveNumberFlag("target", v); }}},
  };
}

Json labelsJson(const std::map<std::string, std::string>& labels) {
  Json object = Json::object();
  for (const auto& [name, value] : labels) object[name] = value;
  return object;
}

Json optionalNumber(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

}  // namespace

ForecastCommandOptions parseForecastFlags(std::span<const std::string> args) {
  ForecastCommandOptions options;
  if (args.empty() || (args[0] != "backtest" && args[0] != "observe")) {
    throw app::FlagError("the first word must be backtest or observe");
  }
  options.action = args[0];
  const std::vector<std::string> read =
      app::parseToolFlags(args.subspan(1), forecastFlags(&options), options.shared, nullptr);
  if (options.config_file.empty()) throw app::FlagError("--config is required");
  if (std::find(read.begin(), read.end(), "prometheus-url") == read.end()) {
    throw app::FlagError("--prometheus-url is required");
  }
  if (options.action == "backtest") {
    if (options.output.empty()) options.output = "text";
    if (options.output != "text" && options.output != "json") {
      throw app::FlagError("--output: backtest writes text or json");
    }
    if (options.target) throw app::FlagError("--target is for observe; backtest takes --threshold");
  } else if (options.output.empty()) {
    throw app::FlagError("--output: observe needs the HTML file to write");
  }
  return options;
}

forecast::GridHistory fetchReplayHistory(prometheus::PrometheusApi& prometheus,
                                         const config::ForecastRule& rule, int days,
                                         forecast::Clock::time_point now,
                                         std::chrono::milliseconds timeout) {
  const forecast::Clock::time_point end = forecast::gridTimeAtOrBefore(now, rule.step);
  const forecast::Clock::time_point start = end - std::chrono::hours(24) * days - rule.history;
  const auto chunk_points =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::chrono::hours(24) / rule.step), 1,
                              forecast::kMaxPointsPerQuery);
  return forecast::fetchGridHistory(prometheus, rule.query, start, end, rule.step, timeout,
                                    chunk_points);
}

std::string backtestReport(const forecast::ObserverPageData& replay, bool json) {
  std::size_t points = 0;
  double weighted_mape = 0;
  double weighted_under = 0;
  std::vector<double> leads;
  Json series = Json::array();
  for (const forecast::ObservedSeries& one : replay.series) {
    const forecast::BacktestResult& result = one.replay;
    points += result.points.size();
    weighted_mape += result.mape * static_cast<double>(result.points.size());
    weighted_under += result.under_forecast_ratio * static_cast<double>(result.points.size());
    leads.insert(leads.end(), result.lead_times_seconds.begin(), result.lead_times_seconds.end());
    Json baselines = Json::object();
    const forecast::BaselineReplay* best = forecast::bestBaseline(one);
    for (const forecast::BaselineReplay& baseline : one.baselines) {
      baselines[std::string(forecast::methodKey(baseline.method))] = {
          {"mape", baseline.replay.mape},
          {"underForecastRatio", baseline.replay.under_forecast_ratio},
          {"leadTimeSeconds", optionalNumber(baseline.replay.lead_time_seconds)},
          {"points", baseline.replay.points.size()}};
    }
    Json served_steps = Json::object();
    for (const auto& [method, steps] : one.served_steps) {
      served_steps[std::string(forecast::methodKey(method))] = steps;
    }
    series.push_back({{"labels", labelsJson(one.labels)},
                      {"mape", result.mape},
                      {"underForecastRatio", result.under_forecast_ratio},
                      {"leadTimeSeconds", optionalNumber(result.lead_time_seconds)},
                      {"crossings", result.lead_times_seconds.size()},
                      {"points", result.points.size()},
                      {"method", forecast::methodKey(one.method)},
                      {"why", one.why},
                      {"sampling", one.sampling},
                      {"servedSteps", std::move(served_steps)},
                      {"baselines", std::move(baselines)},
                      {"bestBaseline", best ? Json(forecast::methodKey(best->method)) : Json()},
                      {"model", one.why}});
  }
  const double mape = points ? weighted_mape / static_cast<double>(points) : 0;
  const double under = points ? weighted_under / static_cast<double>(points) : 0;
  const bool has_lead = !leads.empty();
  const double lead = has_lead ? median(leads) : 0;
  if (json) {
    Json report = {{"rule", replay.rule},
                   {"stepSeconds", replay.step.count()},
                   {"horizonSeconds", replay.horizon.count()},
                   {"mape", mape},
                   {"underForecastRatio", under},
                   {"leadTimeSeconds", has_lead ? Json(lead) : Json(nullptr)},
                   {"points", points},
                   {"series", std::move(series)}};
    return report.dump(2) + "\n";
  }
  std::ostringstream text;
  text << std::fixed << std::setprecision(1);
  text << "forecast " << replay.rule << ": " << points << " steps replayed over "
       << replay.series.size() << " series (step " << replay.step.count() << "s, horizon "
       << replay.horizon.count() << "s)\n";
  text << "  MAPE " << mape * 100 << " %, under-forecast " << under * 100 << " % of steps";
  if (has_lead)
    text << ", median lead " << lead / 60 << " min over " << leads.size() << " crossings";
  text << "\n";
  for (const forecast::ObservedSeries& one : replay.series) {
    text << "  " << forecast::labelSetText(one.labels) << ": MAPE " << one.replay.mape * 100
         << " %, under " << one.replay.under_forecast_ratio * 100 << " %";
    if (one.replay.lead_time_seconds)
      text << ", lead " << *one.replay.lead_time_seconds / 60 << " min";
    text << "; serves " << forecast::methodTitle(one.method) << "\n    " << one.why << "\n";
    if (!one.sampling.empty()) text << "    sampling: " << one.sampling << "\n";
    text << "    baselines on the same steps:";
    for (const forecast::BaselineReplay& baseline : one.baselines) {
      text << " " << forecast::methodTitle(baseline.method) << " " << baseline.replay.mape * 100
           << " %;";
    }
    text << "\n";
  }
  return text.str();
}

std::string forecastUsage() { return kForecastUsage + app::toolFlagsUsage(forecastFlags(nullptr)); }

int runForecastCommand(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  ForecastCommandOptions options;
  try {
    options = parseForecastFlags(args);
  } catch (const app::FlagError& e) {
    err << "forecast: " << e.what() << "\n" << forecastUsage();
    return 1;
  }
  config::AdapterConfig config;
  try {
    config = config::loadConfigFile(options.config_file);
  } catch (const config::ConfigError& e) {
    err << "invalid configuration: " << e.what() << "\n";
    return 1;
  }
  const config::ForecastRule* rule = nullptr;
  for (const auto& candidate : config.forecast_rules) {
    if (candidate.name == options.rule ||
        (options.rule.empty() && config.forecast_rules.size() == 1)) {
      rule = &candidate;
    }
  }
  if (!rule) {
    err << "forecast: " << options.config_file
        << (options.rule.empty()
                ? ": give --rule NAME (the config has " +
                      std::to_string(config.forecast_rules.size()) + " forecastRules)"
                : ": no forecastRule is named \"" + options.rule + "\"")
        << "\n";
    return 1;
  }

  forecast::ObserverPageData replay;
  try {
    prometheus::PrometheusClient prometheus(options.shared.prometheus);
    const forecast::GridHistory history = fetchReplayHistory(
        prometheus, *rule, options.days, forecast::Clock::now(), options.shared.query_timeout);
    const auto replay_steps =
        static_cast<std::size_t>(std::chrono::hours(24) * options.days / rule->step);
    replay = forecast::replayHistory(*rule, history, replay_steps,
                                     options.threshold ? options.threshold : options.target,
                                     options.target);
  } catch (const std::invalid_argument& e) {
    err << "forecast: " << e.what() << "\n";
    return 1;
  } catch (const prometheus::PrometheusError& e) {
    err << "forecast: Prometheus: " << e.detail() << "\n";
    return 2;
  }
  if (options.action == "backtest") {
    out << backtestReport(replay, options.output == "json");
    return 0;
  }
  std::ofstream page(options.output, std::ios::binary | std::ios::trunc);
  page << forecast::renderObserverPage(replay);
  if (!page.flush()) {
    err << "forecast: cannot write " << options.output << "\n";
    return 1;
  }
  out << "wrote " << options.output << ": " << replay.series.size() << " series, " << options.days
      << " days\n";
  return 0;
}

}  // namespace metrics_adapter::cli
