#include "app/config_reloader.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cstdlib>

#include "metrics_adapter/discovery/compiled_rule.h"

namespace metrics_adapter::app {

std::shared_ptr<const discovery::RuleSet> compileRuleSet(
    const config::AdapterConfig& config, std::shared_ptr<const kube::RestMapper> mapper,
    std::shared_ptr<const prometheus::BackendSet> backends) {
  auto rule_set = std::make_shared<discovery::RuleSet>();
  rule_set->mapper = std::move(mapper);
  rule_set->backends = std::move(backends);
  std::vector<std::string> warnings;
  rule_set->rules =
      discovery::compileRules(config, *rule_set->mapper, &warnings, &rule_set->resource_rules);
  for (const auto& warning : warnings) SPDLOG_WARN("{}", warning);
  return rule_set;
}

ConfigState::ConfigState(config::AdapterConfig config,
                         std::shared_ptr<const kube::RestMapper> mapper,
                         std::shared_ptr<const prometheus::BackendSet> backends, Connect connect,
                         Apply apply)
    : config_(std::make_shared<const config::AdapterConfig>(std::move(config))),
      mapper_(std::move(mapper)),
      backends_(std::move(backends)),
      connect_(std::move(connect)),
      apply_(std::move(apply)) {}

void ConfigState::replaceConfig(config::AdapterConfig config) {
  std::lock_guard lock(mutex_);
  auto backends = connect_(config);
  auto rule_set = compileRuleSet(config, mapper_, backends);
  apply_(std::move(rule_set));
  config_ = std::make_shared<const config::AdapterConfig>(std::move(config));
  backends_ = std::move(backends);
}

void ConfigState::replaceMapper(std::shared_ptr<const kube::RestMapper> mapper) {
  std::lock_guard lock(mutex_);
  auto rule_set = compileRuleSet(*config_, mapper, backends_);
  apply_(std::move(rule_set));
  mapper_ = std::move(mapper);
}

std::shared_ptr<const config::AdapterConfig> ConfigState::config() const {
  std::lock_guard lock(mutex_);
  return config_;
}

std::shared_ptr<const kube::RestMapper> ConfigState::mapper() const {
  std::lock_guard lock(mutex_);
  return mapper_;
}

std::shared_ptr<const prometheus::BackendSet> ConfigState::backends() const {
  std::lock_guard lock(mutex_);
  return backends_;
}

std::optional<FileIdentity> fileIdentity(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (!resolved) return std::nullopt;
  FileIdentity identity;
  identity.resolved_path = resolved;
  std::free(resolved);
  struct stat info {};
  if (stat(identity.resolved_path.c_str(), &info) != 0) return std::nullopt;
  identity.device = info.st_dev;
  identity.inode = info.st_ino;
  identity.mtime_ns =
      static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
  identity.size = static_cast<std::int64_t>(info.st_size);
  return identity;
}

ConfigReloader::ConfigReloader(std::string path, std::optional<FileIdentity> loaded,
                               std::shared_ptr<ConfigState> state,
                               std::chrono::milliseconds interval, OnResult on_result)
    : path_(std::move(path)),
      state_(std::move(state)),
      on_result_(std::move(on_result)),
      last_identity_(std::move(loaded)),
      task_(interval, [this] { checkOnce(); }) {}

std::optional<bool> ConfigReloader::checkOnce() {
  std::lock_guard lock(mutex_);
  auto identity = fileIdentity(path_);
  if (identity == last_identity_) return std::nullopt;
  return reloadLocked(std::move(identity));
}

bool ConfigReloader::reloadNow() {
  std::lock_guard lock(mutex_);
  return reloadLocked(fileIdentity(path_));
}

bool ConfigReloader::reloadLocked(std::optional<FileIdentity> identity) {
  // Taken before reading: a change racing with the read shows as a new identity next poll.
  last_identity_ = std::move(identity);
  bool success = false;
  try {
    auto config = config::loadConfigFile(path_);
    std::size_t rules = config.rules.size() + config.external_rules.size();
    state_->replaceConfig(std::move(config));
    SPDLOG_INFO("config reloaded from {}: {} rules", path_, rules);
    success = true;
  } catch (const config::ConfigError& e) {
    SPDLOG_ERROR("config reload rejected, the last good config keeps serving: {}", e.what());
  } catch (const std::exception& e) {
    SPDLOG_ERROR("config reload of {} failed, the last good config keeps serving: {}", path_,
                 e.what());
  }
  on_result_(success);
  return success;
}

}  // namespace metrics_adapter::app
