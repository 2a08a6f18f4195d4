#include "metrics_adapter/app/backend_pool.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace metrics_adapter::app {
namespace {

// Every backend `config` serves from: its `backends`, then `default` as the --prometheus-*
// flags define it unless the config has its own. So an entry at or past config.backends.size()
// comes from the flags.
std::vector<config::Backend> namedBackends(const config::AdapterConfig& config,
                                           const prometheus::PrometheusClientOptions& flags) {
  std::vector<config::Backend> backends = config.backends;
  const bool default_configured = std::any_of(
      backends.begin(), backends.end(),
      [](const config::Backend& backend) { return backend.name == config::kDefaultBackend; });
  if (!default_configured) {
    config::Backend from_flags;
    from_flags.name = std::string(config::kDefaultBackend);
    from_flags.url = flags.url;
    backends.push_back(std::move(from_flags));
  }
  return backends;
}

// Throws ConfigError naming `field` when `path` is set and cannot be opened for reading.
void checkReadable(const config::AdapterConfig& config, const std::string& field,
                   const std::string& path) {
  if (path.empty()) return;
  std::ifstream file(path);
  if (!file) {
    throw config::ConfigError(config::formatConfigError(
        config, field, "cannot read \"" + path + "\": " + std::strerror(errno)));
  }
}

}  // namespace

prometheus::PrometheusClientOptions backendClientOptions(
    const config::Backend& backend, const prometheus::PrometheusClientOptions& flags) {
  prometheus::PrometheusClientOptions options;
  options.backend = backend.name;
  options.url = backend.url;
  options.verb = backend.verb.empty() ? flags.verb : backend.verb;
  options.headers = backend.headers;
  options.ca_file = backend.ca_file;
  options.client_cert_file = backend.client_cert_file;
  options.client_key_file = backend.client_key_file;
  options.token_file = backend.token_file;
  options.basic_auth_username = backend.basic_auth_username;
  options.basic_auth_password_file = backend.basic_auth_password_file;
  options.client_timeout = flags.client_timeout;
  options.post_threshold_bytes = flags.post_threshold_bytes;
  options.max_response_bytes = flags.max_response_bytes;
  options.token_recheck_interval = flags.token_recheck_interval;
  return options;
}

BackendPool::BackendPool(prometheus::PrometheusClientOptions flags,
                         prometheus::CoalescingOptions coalescing,
                         std::shared_ptr<telemetry::SelfMetrics> self_metrics)
    : flags_(std::move(flags)), coalescing_(coalescing), self_metrics_(std::move(self_metrics)) {}

std::shared_ptr<const prometheus::BackendSet> BackendPool::build(
    const config::AdapterConfig& config) {
  std::lock_guard lock(mutex_);
  std::erase_if(clients_, [](const auto& client) { return client.expired(); });
  std::map<std::string, Entry> next;
  std::vector<std::shared_ptr<const prometheus::Backend>> backends;
  const std::vector<config::Backend> named = namedBackends(config, flags_);
  for (std::size_t i = 0; i < named.size(); ++i) {
    backends.push_back(backendFor(config, named[i], i >= config.backends.size(), next));
  }
  entries_ = std::move(next);
  return std::make_shared<const prometheus::BackendSet>(std::move(backends));
}

std::shared_ptr<const prometheus::Backend> BackendPool::backendFor(
    const config::AdapterConfig& config, const config::Backend& backend, bool from_flags,
    std::map<std::string, Entry>& next) {
  prometheus::PrometheusClientOptions options =
      from_flags ? flags_ : backendClientOptions(backend, flags_);
  options.backend = backend.name;
  Entry entry;
  auto kept = entries_.find(backend.name);
  if (kept != entries_.end() && kept->second.options == options) {
    entry = kept->second;
  } else {
    const std::string path = "backends." + backend.name;
    if (!from_flags) {
      checkReadable(config, path + ".caFile", backend.ca_file);
      checkReadable(config, path + ".clientCertFile", backend.client_cert_file);
      checkReadable(config, path + ".clientKeyFile", backend.client_key_file);
      checkReadable(config, path + ".tokenFile", backend.token_file);
      checkReadable(config, path + ".basicAuth.passwordFile", backend.basic_auth_password_file);
    }
    try {
      entry.options = options;
      entry.client = std::make_shared<prometheus::PrometheusClient>(options, self_metrics_);
      entry.api = std::make_shared<prometheus::CoalescingPrometheusApi>(entry.client, coalescing_);
    } catch (const std::invalid_argument& e) {
      if (from_flags) throw;  // the flags' own message names the flag
      throw config::ConfigError(config::formatConfigError(config, path, e.what()));
    }
    clients_.push_back(entry.client);
    SPDLOG_DEBUG("backend {}: new client for {}", backend.name, options.url);
  }
  next[backend.name] = entry;
  auto built = std::make_shared<prometheus::Backend>();
  built->name = backend.name;
  built->url = options.url;
  built->api = entry.api;
  built->query_timeout = backend.timeout;
  built->optional = backend.optional;
  return built;
}

std::shared_ptr<const prometheus::BackendSet> toolBackends(
    const config::AdapterConfig& config, const prometheus::PrometheusClientOptions& flags,
    const std::shared_ptr<prometheus::PrometheusApi>& everywhere) {
  if (!everywhere) return BackendPool(flags, {}, nullptr).build(config);
  std::vector<std::shared_ptr<const prometheus::Backend>> backends;
  for (const config::Backend& named : namedBackends(config, flags)) {
    auto backend = std::make_shared<prometheus::Backend>();
    backend->name = named.name;
    backend->url = named.url;
    backend->api = everywhere;
    backends.push_back(std::move(backend));
  }
  return std::make_shared<const prometheus::BackendSet>(std::move(backends));
}

std::string describeBackends(const prometheus::BackendSet& backends) {
  std::string text;
  for (const auto& backend : backends.all()) {
    if (!text.empty()) text += ", ";
    text += backend->name + " (" + backend->url + ")";
  }
  return text;
}

void BackendPool::cancelCalls() {
  std::lock_guard lock(mutex_);
  for (const auto& weak : clients_) {
    if (auto client = weak.lock()) client->cancelCalls();
  }
}

}  // namespace metrics_adapter::app
