#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "app/periodic_task.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/registry.h"
#include "metrics_adapter/kube/rest_mapper.h"

namespace metrics_adapter::app {

// Compiles `config` against `mapper` (rules naming unknown resources are left out, with a
// warning logged), with `backends` serving its rules. Throws config::ConfigError naming file,
// rule and field.
std::shared_ptr<const discovery::RuleSet> compileRuleSet(
    const config::AdapterConfig& config, std::shared_ptr<const kube::RestMapper> mapper,
    std::shared_ptr<const prometheus::BackendSet> backends);

// The config that serves now and the REST mapping it was compiled against. Both the config
// reloader and the REST mapping refresher go through it, so a new mapping is applied to the
// current config and a new config to the current mapping, one change at a time. Thread-safe.
class ConfigState {
 public:
  // Receives every new rule set (e.g. Relister::setRuleSet); called with the state locked.
  using Apply = std::function<void(std::shared_ptr<const discovery::RuleSet>)>;
  // Builds the backends a config names (BackendPool::build); throws config::ConfigError.
  using Connect =
      std::function<std::shared_ptr<const prometheus::BackendSet>(const config::AdapterConfig&)>;

  // `backends` are those `config` was compiled with.
  ConfigState(config::AdapterConfig config, std::shared_ptr<const kube::RestMapper> mapper,
              std::shared_ptr<const prometheus::BackendSet> backends, Connect connect, Apply apply);

  // Connects `config`'s backends, compiles it against the current mapping and applies it.
  // Throws config::ConfigError (then nothing changes, the backends in use included).
  void replaceConfig(config::AdapterConfig config);
  // Compiles the current config against `mapper` and applies it. Throws config::ConfigError
  // (then nothing changes).
  void replaceMapper(std::shared_ptr<const kube::RestMapper> mapper);

  std::shared_ptr<const config::AdapterConfig> config() const;
  std::shared_ptr<const kube::RestMapper> mapper() const;
  std::shared_ptr<const prometheus::BackendSet> backends() const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const config::AdapterConfig> config_;
  std::shared_ptr<const kube::RestMapper> mapper_;
  std::shared_ptr<const prometheus::BackendSet> backends_;
  Connect connect_;
  Apply apply_;
};

// What identifies one version of a file: the path after resolving symlinks (a ConfigMap
// update swaps the `..data` link to a new directory), and that file's inode, mtime and size.
struct FileIdentity {
  std::string resolved_path;
  dev_t device = 0;
  ino_t inode = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t size = 0;

  bool operator==(const FileIdentity&) const = default;
};

// nullopt when the path does not resolve to a file that can be stat'ed.
std::optional<FileIdentity> fileIdentity(const std::string& path);

// Re-reads the config file when its identity changes (checked every `interval`) and on
// reloadNow() (SIGHUP). A valid config replaces the current one in the ConfigState; an invalid
// or unreadable one is logged with the ConfigError text and the last good one keeps serving.
// Every attempt is reported to `on_result` (true = swapped in). Thread-safe.
class ConfigReloader {
 public:
  using OnResult = std::function<void(bool success)>;

  // `loaded` is fileIdentity(path) taken before `state`'s config was read from it.
  ConfigReloader(std::string path, std::optional<FileIdentity> loaded,
                 std::shared_ptr<ConfigState> state, std::chrono::milliseconds interval,
                 OnResult on_result);

  void start() { task_.start(); }
  void stop() { task_.stop(); }

  // Reloads when the file's identity changed since the last attempt; nullopt when it did not,
  // else whether the new config was swapped in. A broken version is tried once, not every poll.
  std::optional<bool> checkOnce();
  // Reloads now whatever the identity; true when the new config was swapped in.
  bool reloadNow();

 private:
  bool reloadLocked(std::optional<FileIdentity> identity);

  std::string path_;
  std::shared_ptr<ConfigState> state_;
  OnResult on_result_;
  std::mutex mutex_;  // one reload at a time
  std::optional<FileIdentity> last_identity_;
  PeriodicTask task_;  // last: stops before the members it uses go away
};

}  // namespace metrics_adapter::app
