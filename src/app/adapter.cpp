#include "metrics_adapter/app/adapter.h"

#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <csignal>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "app/access_log.h"
#include "app/auth_setup.h"
#include "app/config_reloader.h"
#include "app/debug_socket.h"
#include "app/periodic_task.h"
#include "app/process_tuning.h"
#include "app/rest_mapping_refresher.h"
#include "metrics_adapter/api/request_pipeline.h"
#include "metrics_adapter/api/resource_metrics_handler.h"
#include "metrics_adapter/api/router.h"
#include "metrics_adapter/api/version_info.h"
#include "metrics_adapter/app/backend_pool.h"
#include "metrics_adapter/audit/auditor.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/discovery/relister.h"
#include "metrics_adapter/forecast/forecast_service.h"
#include "metrics_adapter/kube/api_discovery.h"
#include "metrics_adapter/kube/cached_object_lister.h"
#include "metrics_adapter/kube/rate_limited_kube_api.h"
#include "metrics_adapter/logging/logging.h"
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
  const KubeconfigChoice chosen = listerKubeconfig(options);
  const std::optional<kube::KubeClientOptions> client_options =
      chosen.path.empty() ? kube::inClusterOptions() : kube::loadKubeconfig(chosen.path);
  if (!client_options) {
    SPDLOG_WARN(
        "no Kubernetes API configured (no --lister-kubeconfig/--kubeconfig, not in a cluster): "
        "wildcard requests with a labelSelector will answer 503");
    return nullptr;
  }
  SPDLOG_INFO("Kubernetes API: {} ({})", client_options->server, client_options->source);
  return std::make_shared<kube::KubeClient>(*client_options);
}

// The client for objects and discovery, limited by --client-qps/--client-burst as upstream's
// lister client is (TokenReview and SubjectAccessReview are not: they hold up requests).
std::shared_ptr<kube::KubeApi> limitListerCalls(const AdapterOptions& options,
                                                std::shared_ptr<kube::KubeApi> client) {
  if (!client || options.client_qps <= 0) return client;
  const int burst = options.client_burst > 0 ? options.client_burst : 10;  // client-go's
  SPDLOG_INFO("Kubernetes API calls for objects and discovery limited to {}/s, burst {}",
              options.client_qps, burst);
  return std::make_shared<kube::RateLimitedKubeApi>(std::move(client), options.client_qps, burst);
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
    SPDLOG_WARN("*** --authentication-mode=none: every caller is allowed everything. ***");
    SPDLOG_WARN("*** Use it only for local tests; in a cluster use the default, delegated. ***");
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
      SPDLOG_WARN("API discovery failed, using the built-in REST mapping until it works: {}",
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

// How often the forecast rules are checked for a due refresh (each has its refreshInterval),
// and how long one query_range call of a refresh may take.
constexpr std::chrono::seconds kForecastTick{1};
constexpr std::chrono::seconds kForecastQueryTimeout{30};
// How often the fresh reads are checked for a due one (each rule is read once per
// forecast::kFreshInterval): a quarter second adds at most that to a served value's age.
constexpr std::chrono::milliseconds kFreshTick{250};
// The first selections' worker: batches of this much CPU (the refresh of the same rule waits
// for at most one), run back to back while any is pending, at this nice value.
constexpr std::chrono::milliseconds kSelectionBatch{100};
constexpr std::chrono::milliseconds kSelectionTick{100};
constexpr int kSelectionNice = 10;
// A replica reports Ready only once every forecast series has its first selection, or once this
// long has passed since the start (then Ready with a warning: forecasts serve latest values).
constexpr std::chrono::minutes kSelectionReadinessGrace{2};

// A startup step that cannot go on; what() is the logged reason.
class StartupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

config::AdapterConfig loadConfig(const std::string& path) {
  try {
    return config::loadConfigFile(path);
  } catch (const config::ConfigError& e) {
    throw StartupError(std::string("invalid configuration: ") + e.what());
  }
}

// The API groups served, for the start line: custom and external metrics always, resource
// metrics while the config has resourceRules (as the /apis document lists them).
std::string describeApiGroups(const config::AdapterConfig& config) {
  std::string groups =
      "custom.metrics.k8s.io (v1beta2, v1beta1), external.metrics.k8s.io (v1beta1)";
  if (config.resource_rules) groups += ", metrics.k8s.io (v1beta1)";
  return groups;
}

// What the command line asked that is done differently here, said once at start.
void logStartupNotices(const AdapterOptions& options) {
  if (!options.ignored_arguments.empty()) {
    std::string words;
    for (const std::string& word : options.ignored_arguments) {
      words += (words.empty() ? "\"" : ", \"") + word + "\"";
    }
    SPDLOG_WARN(
        "ignoring {} (not flags; upstream's command line ignores them too, e.g. the "
        "Helm chart's leading \"/adapter\")",
        words);
  }
  for (const StartupNotice& notice : options.notices) {
    if (notice.warning) {
      SPDLOG_WARN("{}", notice.text);
    } else {
      SPDLOG_INFO("{}", notice.text);
    }
  }
}

// Everything the adapter runs, built in data-flow order and stopped in reverse.
class Adapter {
 public:
  explicit Adapter(const AdapterOptions& options)
      : options_(options), self_metrics_(std::make_shared<telemetry::SelfMetrics>()) {
    loaded_identity_ = fileIdentity(options.config_file);
    config::AdapterConfig config = loadConfig(options.config_file);
    connectBackends(config);
    std::vector<kube::ResourceInfo> resources = initialResources(kube_.get());
    startDiscovery(std::move(config), resources);
    buildServer();
    if (kube_) {
      refresher_ = std::make_unique<RestMappingRefresher>(
          kube_, options.discovery_interval, resources,
          [state = config_state_](std::shared_ptr<const kube::RestMapper> mapper) {
            try {
              state->replaceMapper(std::move(mapper));
            } catch (const config::ConfigError& e) {
              SPDLOG_ERROR("rules not updated for the new REST mapping: {}", e.what());
            }
          });
    }
  }

  void start() {
    try {
      server_->start();
    } catch (const std::exception& e) {
      throw StartupError(std::string("cannot start the HTTPS server: ") + e.what());
    }
    try {
      if (debug_socket_) debug_socket_->start();
    } catch (const std::exception& e) {
      throw StartupError(e.what());
    }
    self_metrics_->setBuildInfo(MA_VERSION);
    relister_->start();
    startForecastsIfConfigured();
    if (refresher_) refresher_->start();
    reloader_->start();
    SPDLOG_INFO("metrics-adapter {} serving {} on https://{}:{} from {}", MA_VERSION,
                describeApiGroups(*config_state_->config()), options_.server.bind_address,
                server_->port(), describeBackends(*backends_));
  }

  void reload() {
    SPDLOG_INFO("received SIGHUP, reloading {}", options_.config_file);
    reloader_->reloadNow();
  }

  void stop() {
    // Requests still waiting on Prometheus after the drain, then the relist, end at once.
    server_->stop(std::chrono::seconds(10), [this] { backend_pool_->cancelCalls(); });
    backend_pool_->cancelCalls();
    reloader_->stop();
    forecast_selections_->stop();
    forecast_fresh_->stop();
    forecast_refresh_->stop();
    if (refresher_) refresher_->stop();
    if (auth_ && auth_->config_refresh) auth_->config_refresh->stop();
    relister_->stop();
    if (debug_socket_) debug_socket_->stop();
    if (auditor_) auditor_->stop();  // the last answers' events are flushed
  }

 private:
  // The Prometheus backends (identical queries in flight together share one call), the
  // Kubernetes API and delegated auth.
  void connectBackends(const config::AdapterConfig& config) {
    try {
      backend_pool_ = std::make_shared<BackendPool>(
          options_.prometheus,
          prometheus::CoalescingOptions{.cache_ttl = options_.metrics_cache_ttl}, self_metrics_);
      backends_ = backend_pool_->build(config);
      std::shared_ptr<kube::KubeApi> kube = makeKubeClient(options_);
      auth_ = makeAuth(options_, kube);
      kube_ = limitListerCalls(options_, std::move(kube));
      auditor_ = audit::Auditor::start(options_.audit, self_metrics_);
    } catch (const config::ConfigError& e) {
      throw StartupError(std::string("invalid configuration: ") + e.what());
    } catch (const std::invalid_argument& e) {
      throw StartupError(e.what());
    } catch (const std::runtime_error& e) {  // the auth ConfigMap unless tolerated, audit files
      throw StartupError(e.what());
    }
  }

  // The rules, the relist loop that turns them into registry snapshots, and config reloads.
  void startDiscovery(config::AdapterConfig config,
                      const std::vector<kube::ResourceInfo>& resources) {
    std::shared_ptr<const discovery::RuleSet> rule_set;
    try {
      rule_set =
          compileRuleSet(config, std::make_shared<const kube::RestMapper>(resources), backends_);
    } catch (const config::ConfigError& e) {
      throw StartupError(std::string("invalid configuration: ") + e.what());
    }
    SPDLOG_INFO("loaded {} of {} rules and {} forecast rules from {}", rule_set->rules.size(),
                config.rules.size() + config.external_rules.size(), config.forecast_rules.size(),
                options_.config_file);
    discovery::RelistOptions relist = options_.relist;
    relist.after_run = returnFreedMemory;
    relister_ = std::make_shared<discovery::Relister>(rule_set, relist, self_metrics_);
    config_state_ = std::make_shared<ConfigState>(
        std::move(config), rule_set->mapper, backends_,
        [pool = backend_pool_](const config::AdapterConfig& next) { return pool->build(next); },
        [relister = relister_](std::shared_ptr<const discovery::RuleSet> rules) {
          relister->setRuleSet(std::move(rules));
        });
    // Forecasts follow the config the state holds now, reloads included.
    forecasts_ = std::make_shared<forecast::ForecastService>(
        [state = config_state_] { return state->backends(); },
        // First selections run on the background worker (forecast_selections_), not in the
        // refresh.
        forecast::ForecastServiceOptions{.query_timeout = kForecastQueryTimeout,
                                         .first_selections_per_refresh = 0});
    forecast_refresh_ = std::make_unique<PeriodicTask>(
        kForecastTick, [forecasts = forecasts_, state = config_state_] {
          forecasts->refresh(state->config()->forecast_rules, forecast::Clock::now());
        });
    forecast_fresh_ = std::make_unique<PeriodicTask>(
        kFreshTick, [forecasts = forecasts_] { forecasts->readFresh(forecast::Clock::now()); });
    forecast_selections_ = std::make_unique<PeriodicTask>(
        kSelectionTick,
        [forecasts = forecasts_, metrics = self_metrics_, lowered = false]() mutable {
          if (!lowered) lowerThisThreadPriority(kSelectionNice);
          lowered = true;
          // Back to back while any is pending, a batch at a time so that stop() waits for one.
          forecasts->selectPending(kSelectionBatch);
          metrics->setForecastSelectionsPending(forecasts->selectionProgress().pending);
        });
    reloader_ =
        std::make_unique<ConfigReloader>(options_.config_file, loaded_identity_, config_state_,
                                         options_.config_check_interval, [this](bool success) {
                                           self_metrics_->countConfigReload(success);
                                           if (success) startForecastsIfConfigured();
                                         });
  }

  // The forecasts' three threads start with the first config that has forecastRules, at start
  // or on a reload: a server without forecasts runs none of them (issue 47, idle memory).
  void startForecastsIfConfigured() {
    std::lock_guard lock(forecast_start_mutex_);
    if (forecasts_started_ || config_state_->config()->forecast_rules.empty()) return;
    forecasts_started_ = true;
    forecast_refresh_->start();
    forecast_fresh_->start();
    forecast_selections_->start();
  }

  // The handlers, the request pipeline and the HTTPS server that feeds it.
  void buildServer() {
    std::shared_ptr<kube::ObjectLister> lister;
    if (kube_) {
      lister =
          std::make_shared<kube::CachedObjectLister>(kube_, options_.object_lister, self_metrics_);
    }
    api::SnapshotSource snapshots = [relister = relister_] { return relister->snapshot(); };

    api::RouterParts parts;
    parts.custom_metrics = std::make_shared<const api::CustomMetricsHandler>(
        snapshots, lister, api::CustomMetricsOptions{.query_timeout = options_.query_timeout});
    parts.external_metrics = std::make_shared<const api::ExternalMetricsHandler>(
        snapshots, api::ExternalMetricsOptions{.query_timeout = options_.query_timeout},
        forecasts_);
    parts.forecasts = forecasts_;
    parts.resource_metrics = std::make_shared<const api::ResourceMetricsHandler>(
        lister, std::make_shared<const resource::ResourceMetrics>(
                    resource::ResourceMetricsOptions{.query_timeout = options_.query_timeout},
                    self_metrics_));
    parts.snapshots = snapshots;
    parts.health.live.push_back({"ping", [] { return std::optional<std::string>(); }});
    parts.health.ready.push_back({"discovery", [relister = relister_] {
                                    return relister->firstRunDone()
                                               ? std::optional<std::string>()
                                               : "the first relist has not finished";
                                  }});
    parts.health.ready.push_back(
        {"forecasts",
         [forecasts = forecasts_, metrics = self_metrics_, state = config_state_,
          started = std::chrono::steady_clock::now(), graced = std::make_shared<std::once_flag>()] {
           // Without forecastRules there is nothing to wait for (not even the first refresh, a
           // tick after the start).
           if (state->config()->forecast_rules.empty()) return std::optional<std::string>();
           const forecast::SelectionProgress progress = forecasts->selectionProgress();
           metrics->setForecastSelectionsPending(progress.pending);  // as of this answer
           if (progress.done()) return std::optional<std::string>();
           const std::string pending = fmt::format(
               "{} of {} forecast series wait for their first method selection, {} of {} "
               "forecast rules not refreshed yet",
               progress.pending, progress.series, progress.rules - progress.rules_refreshed,
               progress.rules);
           if (std::chrono::steady_clock::now() - started < kSelectionReadinessGrace) {
             return std::optional<std::string>(pending);
           }
           std::call_once(*graced, [&] {
             SPDLOG_WARN(
                 "ready after {} s although {}: they serve their latest value until "
                 "selected",
                 std::chrono::seconds(kSelectionReadinessGrace).count(), pending);
             metrics->countForecastReadyBeforeSelections();
           });
           return std::optional<std::string>();
         }});
    parts.self_metrics = self_metrics_;
    parts.version = api::buildVersionInfo(MA_VERSION);

    auto router = std::make_shared<const api::Router>(std::move(parts));
    auto pipeline = std::make_shared<const api::RequestPipeline>(auth_ ? auth_->filter : nullptr,
                                                                 router, self_metrics_);
    server::Handlers handlers;
    handlers.handler = [pipeline](const server::HttpRequest& request) {
      return pipeline->handle(request);
    };
    handlers.at_once = [pipeline](const server::HttpRequest& request) {
      return pipeline->answerAtOnce(request);
    };
    api::RequestAccounting::Audit audit;
    if (auditor_) {
      audit = [auditor = auditor_.get()](const server::Exchange& exchange) {
        return auditor->record(exchange);
      };
    }
    server_ = std::make_unique<server::HttpsServer>(
        options_.server, std::move(handlers),
        std::make_shared<api::RequestAccounting>(self_metrics_, logExchange, std::move(audit)));
    if (!options_.debug_socket_path.empty()) {
      debug_socket_ = makeDebugSocket(options_, router);
    }
  }

  const AdapterOptions& options_;
  std::shared_ptr<telemetry::SelfMetrics> self_metrics_;
  std::optional<FileIdentity> loaded_identity_;
  std::shared_ptr<BackendPool> backend_pool_;  // to connect reloads and cancel calls at stop
  std::shared_ptr<const prometheus::BackendSet> backends_;  // those of the config at startup
  std::shared_ptr<kube::KubeApi> kube_;
  std::optional<AuthStack> auth_;
  std::shared_ptr<discovery::Relister> relister_;
  std::shared_ptr<ConfigState> config_state_;
  std::shared_ptr<forecast::ForecastService> forecasts_;
  std::unique_ptr<PeriodicTask> forecast_refresh_;
  std::unique_ptr<PeriodicTask> forecast_fresh_;       // readFresh
  std::unique_ptr<PeriodicTask> forecast_selections_;  // the first selections' worker
  std::mutex forecast_start_mutex_;  // the reloader's thread and start() both may start them
  bool forecasts_started_ = false;
  std::unique_ptr<ConfigReloader> reloader_;
  std::unique_ptr<RestMappingRefresher> refresher_;
  std::unique_ptr<audit::Auditor> auditor_;  // null when nothing is audited
  std::unique_ptr<server::HttpsServer> server_;
  std::unique_ptr<server::DebugSocketServer> debug_socket_;
};

// Waits for SIGINT/SIGTERM; each SIGHUP on the way runs `reload`. Returns the stopping signal.
int waitForStop(const sigset_t& handled_signals, const std::function<void()>& reload) {
  int signal_number = 0;
  while (sigwait(&handled_signals, &signal_number) != 0 || signal_number == SIGHUP) {
    if (signal_number == SIGHUP) reload();
  }
  return signal_number;
}

}  // namespace

int runAdapter(const AdapterOptions& options) {
  logging::configureLogging(options.log);
  logStartupNotices(options);
  const sigset_t handled_signals = blockHandledSignals();
  raiseOpenFileLimit();
  std::unique_ptr<Adapter> adapter;
  try {
    adapter = std::make_unique<Adapter>(options);
    adapter->start();
  } catch (const StartupError& e) {
    SPDLOG_CRITICAL("{}", e.what());
    return 1;
  }
  const int signal_number = waitForStop(handled_signals, [&adapter] { adapter->reload(); });
  SPDLOG_INFO("received signal {}, shutting down", signal_number);
  adapter->stop();
  return 0;
}

}  // namespace metrics_adapter::app
