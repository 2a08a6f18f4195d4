#include "metrics_adapter/app/adapter.h"

#include <pthread.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>

#include "metrics_adapter/api/router.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/discovery/relister.h"

#ifndef MA_VERSION
#define MA_VERSION "dev"
#endif

namespace metrics_adapter::app {
namespace {

// Blocks SIGINT/SIGTERM in every thread (threads inherit the mask) and returns the set to wait on.
sigset_t blockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

}  // namespace

void configureLogging(int verbosity) {
  auto logger = spdlog::stderr_color_mt("metrics-adapter");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%L%$ %v");
  if (verbosity >= 8) {
    spdlog::set_level(spdlog::level::trace);
  } else if (verbosity >= 6) {
    spdlog::set_level(spdlog::level::debug);
  } else {
    spdlog::set_level(spdlog::level::info);
  }
}

int runAdapter(const AdapterOptions& options) {
  sigset_t stop_signals = blockStopSignals();

  auto mapper = std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin());
  std::vector<std::shared_ptr<const discovery::CompiledRule>> rules;
  try {
    auto config = config::loadConfigFile(options.config_file);
    std::vector<std::string> warnings;
    rules = discovery::compileRules(config, *mapper, &warnings);
    for (const auto& warning : warnings) spdlog::warn("{}", warning);
    spdlog::info("loaded {} rules from {}", rules.size(), options.config_file);
  } catch (const config::ConfigError& e) {
    spdlog::critical("invalid configuration: {}", e.what());
    return 1;
  }

  std::shared_ptr<prometheus::PrometheusApi> prometheus;
  try {
    prometheus = std::make_shared<prometheus::PrometheusClient>(options.prometheus);
  } catch (const std::invalid_argument& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }

  auto relister = std::make_shared<discovery::Relister>(rules, prometheus, options.relist);
  api::SnapshotSource snapshots = [relister] { return relister->snapshot(); };
  auto custom_metrics = std::make_shared<const api::CustomMetricsHandler>(
      snapshots, mapper, prometheus, nullptr,
      api::CustomMetricsOptions{.query_timeout = options.query_timeout});

  api::HealthChecks health;
  health.live.push_back({"ping", [] { return std::optional<std::string>(); }});
  health.ready.push_back({"discovery", [relister]() -> std::optional<std::string> {
                            if (relister->firstRunDone()) return std::nullopt;
                            return "the first relist has not finished";
                          }});
  auto router =
      std::make_shared<const api::Router>(custom_metrics, snapshots, std::move(health), MA_VERSION);

  server::HttpsServer server(options.server, [router](const server::HttpRequest& request) {
    return router->handle(request);
  });
  try {
    server.start();
  } catch (const std::exception& e) {
    spdlog::critical("cannot start the HTTPS server: {}", e.what());
    return 1;
  }
  relister->start();
  spdlog::info("metrics-adapter {} serving custom.metrics.k8s.io on https://{}:{} from {}",
               MA_VERSION, options.server.bind_address, server.port(), options.prometheus.url);

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  spdlog::info("received signal {}, shutting down", signal_number);
  server.stop(std::chrono::seconds(10));
  relister->stop();
  return 0;
}

}  // namespace metrics_adapter::app
