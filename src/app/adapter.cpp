#include "metrics_adapter/app/adapter.h"

#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <csignal>

#include "app/auth_setup.h"
#include "app/config_reloader.h"
#include "app/logging.h"
#include "app/rest_mapping_refresher.h"
#include "metrics_adapter/api/router.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/discovery/relister.h"
#include "metrics_adapter/kube/api_discovery.h"
#include "metrics_adapter/kube/cached_object_lister.h"
#include "metrics_adapter/prometheus/coalescing_prometheus_api.h"
#include "metrics_adapter/telemetry/self_metrics.h"

#ifndef MA_VERSION
#define MA_VERSION "dev"
#endif

namespace metrics_adapter::app {
namespace {

// Blocks SIGINT/SIGTERM (stop) and SIGHUP (reload the config) in every thread (threads inherit
// the mask) and returns the set to wait on.
sigset_t blockHandledSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// --lister-kubeconfig, else --kubeconfig, else in-cluster credentials, else none.
std::shared_ptr<kube::KubeApi> makeKubeClient(const AdapterOptions& options) {
  std::optional<kube::KubeClientOptions> client_options;
  if (!options.lister_kubeconfig.empty()) {
    client_options = kube::loadKubeconfig(options.lister_kubeconfig);
  } else if (!options.kubeconfig.empty()) {
    client_options = kube::loadKubeconfig(options.kubeconfig);
  } else {
    client_options = kube::inClusterOptions();
  }
  if (!client_options) {
    spdlog::warn(
        "no Kubernetes API configured (no --lister-kubeconfig/--kubeconfig, not in a cluster): "
        "wildcard requests with a labelSelector will answer 503");
    return nullptr;
  }
  spdlog::info("Kubernetes API: {} ({})", client_options->server, client_options->source);
  return std::make_shared<kube::KubeClient>(*client_options);
}

std::shared_ptr<kube::KubeApi> clientFor(const std::string& kubeconfig,
                                         const std::shared_ptr<kube::KubeApi>& fallback) {
  if (kubeconfig.empty()) return fallback;
  return std::make_shared<kube::KubeClient>(kube::loadKubeconfig(kubeconfig));
}

// Delegated authentication and authorization, or nothing in --authentication-mode=none.
std::optional<AuthStack> makeAuth(const AdapterOptions& options,
                                  const std::shared_ptr<kube::KubeApi>& kube) {
  if (!options.auth.delegated) {
    spdlog::warn("*** --authentication-mode=none: every caller is allowed everything. ***");
    spdlog::warn("*** Use it only for local tests; in a cluster use the default, delegated. ***");
    return std::nullopt;
  }
  auto authentication = clientFor(options.auth.authentication_kubeconfig, kube);
  auto authorization = clientFor(options.auth.authorization_kubeconfig, kube);
  if (!authentication || !authorization) {
    throw std::invalid_argument(
        "delegated authentication needs the Kubernetes API for TokenReview and "
        "SubjectAccessReview: run in a cluster, or pass --kubeconfig (or "
        "--authentication-kubeconfig and --authorization-kubeconfig); for local tests only, "
        "--authentication-mode=none");
  }
  return makeAuthStack(options.auth, authentication, authorization);
}

// The cluster's resources when the API answers, else the built-in table.
std::vector<kube::ResourceInfo> initialResources(kube::KubeApi* kube) {
  if (kube) {
    try {
      return kube::discoverResources(*kube, std::chrono::seconds(10));
    } catch (const std::exception& e) {
      spdlog::warn("API discovery failed, using the built-in REST mapping until it works: {}",
                   e.what());
    }
  }
  return kube::RestMapper::builtin().resources();
}

// Every connection is a descriptor: allow as many as the hard limit does (Go servers do the
// same at start), so max-connections, not the default soft limit of 1024, is what bounds them.
void raiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace

int runAdapter(const AdapterOptions& options) {
  configureLogging(options.verbosity, options.log_format);
  sigset_t handled_signals = blockHandledSignals();
  raiseOpenFileLimit();

  std::optional<FileIdentity> loaded_identity = fileIdentity(options.config_file);
  config::AdapterConfig config;
  try {
    config = config::loadConfigFile(options.config_file);
  } catch (const config::ConfigError& e) {
    spdlog::critical("invalid configuration: {}", e.what());
    return 1;
  }

  std::shared_ptr<prometheus::PrometheusApi> prometheus;
  std::shared_ptr<prometheus::PrometheusClient> prometheus_client;  // to cancel calls at shutdown
  std::shared_ptr<kube::KubeApi> kube;
  std::optional<AuthStack> auth;
  try {
    // Identical queries in flight together (many HPAs on one metric) share one call.
    prometheus_client = std::make_shared<prometheus::PrometheusClient>(options.prometheus);
    prometheus = std::make_shared<prometheus::CoalescingPrometheusApi>(
        prometheus_client, prometheus::CoalescingOptions{.cache_ttl = options.metrics_cache_ttl});
    kube = makeKubeClient(options);
    auth = makeAuth(options, kube);
  } catch (const std::invalid_argument& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }

  std::vector<kube::ResourceInfo> resources = initialResources(kube.get());
  std::shared_ptr<const discovery::RuleSet> rule_set;
  try {
    rule_set = compileRuleSet(config, std::make_shared<const kube::RestMapper>(resources));
  } catch (const config::ConfigError& e) {
    spdlog::critical("invalid configuration: {}", e.what());
    return 1;
  }
  spdlog::info("loaded {} of {} rules from {}", rule_set->rules.size(),
               config.rules.size() + config.external_rules.size(), options.config_file);

  auto relister = std::make_shared<discovery::Relister>(rule_set, prometheus, options.relist);
  auto state =
      std::make_shared<ConfigState>(std::move(config), rule_set->mapper,
                                    [relister](std::shared_ptr<const discovery::RuleSet> rules) {
                                      relister->setRuleSet(std::move(rules));
                                    });
  ConfigReloader reloader(
      options.config_file, loaded_identity, state, options.config_check_interval,
      [](bool success) { telemetry::SelfMetrics::instance().countConfigReload(success); });
  std::unique_ptr<RestMappingRefresher> refresher;
  if (kube) {
    refresher = std::make_unique<RestMappingRefresher>(
        kube, options.discovery_interval, resources,
        [state](std::shared_ptr<const kube::RestMapper> mapper) {
          try {
            state->replaceMapper(std::move(mapper));
          } catch (const config::ConfigError& e) {
            spdlog::error("rules not updated for the new REST mapping: {}", e.what());
          }
        });
  }
  std::shared_ptr<kube::ObjectLister> lister;
  if (kube) {
    // Non-owning: the process-wide instance, until the adapter builds its own SelfMetrics.
    std::shared_ptr<telemetry::SelfMetrics> metrics(std::shared_ptr<void>(),
                                                    &telemetry::SelfMetrics::instance());
    lister = std::make_shared<kube::CachedObjectLister>(kube, options.object_lister, metrics);
  }

  api::SnapshotSource snapshots = [relister] { return relister->snapshot(); };
  auto custom_metrics = std::make_shared<const api::CustomMetricsHandler>(
      snapshots, prometheus, lister,
      api::CustomMetricsOptions{.query_timeout = options.query_timeout});
  auto external_metrics = std::make_shared<const api::ExternalMetricsHandler>(
      snapshots, prometheus, api::ExternalMetricsOptions{.query_timeout = options.query_timeout});

  api::HealthChecks health;
  health.live.push_back({"ping", [] { return std::optional<std::string>(); }});
  health.ready.push_back({"discovery", [relister]() -> std::optional<std::string> {
                            if (relister->firstRunDone()) return std::nullopt;
                            return "the first relist has not finished";
                          }});
  auto router = std::make_shared<const api::Router>(custom_metrics, external_metrics, snapshots,
                                                    std::move(health), MA_VERSION);

  std::shared_ptr<const AuthFilter> filter = auth ? auth->filter : nullptr;
  server::HttpsServer server(options.server, [filter, router](const server::HttpRequest& request) {
    auto began = std::chrono::steady_clock::now();
    std::optional<server::HttpResponse> refused;
    AccessEntry entry;
    telemetry::PrometheusTimeOnThisThread::reset();
    if (filter) refused = filter->check(request, &entry.user);
    server::HttpResponse response = refused ? std::move(*refused) : router->handle(request);
    if (auto waited = telemetry::PrometheusTimeOnThisThread::total(); waited.count() > 0) {
      entry.promql_time = std::chrono::duration_cast<std::chrono::microseconds>(waited);
    }
    entry.verb = request.method;
    entry.target = request.target;
    entry.code = response.status;
    entry.latency = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - began);
    entry.remote = request.remote_address;
    logAccess(entry);
    return response;
  });
  try {
    server.start();
  } catch (const std::exception& e) {
    spdlog::critical("cannot start the HTTPS server: {}", e.what());
    return 1;
  }
  telemetry::SelfMetrics::instance().setBuildInfo(MA_VERSION);
  relister->start();
  if (refresher) refresher->start();
  reloader.start();
  spdlog::info(
      "metrics-adapter {} serving custom.metrics.k8s.io and external.metrics.k8s.io on "
      "https://{}:{} from {}",
      MA_VERSION, options.server.bind_address, server.port(), options.prometheus.url);

  int signal_number = 0;
  while (sigwait(&handled_signals, &signal_number) != 0 || signal_number == SIGHUP) {
    if (signal_number == SIGHUP) {
      spdlog::info("received SIGHUP, reloading {}", options.config_file);
      reloader.reloadNow();
    }
  }
  spdlog::info("received signal {}, shutting down", signal_number);
  // Requests still waiting on Prometheus after the drain, then the relist, end at once.
  server.stop(std::chrono::seconds(10), [&prometheus_client] { prometheus_client->cancelCalls(); });
  prometheus_client->cancelCalls();
  reloader.stop();
  if (refresher) refresher->stop();
  if (auth && auth->config_refresh) auth->config_refresh->stop();
  relister->stop();
  return 0;
}

}  // namespace metrics_adapter::app
