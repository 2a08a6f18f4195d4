#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/discovery/registry.h"
#include "metrics_adapter/prometheus/prometheus_api.h"

namespace metrics_adapter::discovery {

struct RelistOptions {
  std::chrono::milliseconds interval{std::chrono::minutes(1)};  // --metrics-relist-interval
  std::chrono::milliseconds max_age{std::chrono::minutes(2)};   // --metrics-max-age
  std::chrono::milliseconds series_timeout{std::chrono::seconds(30)};
};

// Discovers metrics: one /api/v1/series call per distinct seriesQuery, all in parallel, every
// interval. A failing query keeps the last good findings of its rules; every run ends with a
// new immutable snapshot swapped in atomically. Thread-safe.
class Relister {
 public:
  Relister(std::shared_ptr<const RuleSet> rule_set,
           std::shared_ptr<prometheus::PrometheusApi> prometheus, RelistOptions options);
  ~Relister();  // stops the loop

  // Runs one relist now, on the calling thread.
  void relistOnce();
  // Serves `rule_set` from now on and relists at once (in the loop when started). Findings of
  // rules that keep their id and seriesQuery carry over until the relist replaces them.
  void setRuleSet(std::shared_ptr<const RuleSet> rule_set);
  // Starts the background loop (first run immediately).
  void start();
  void stop();

  std::shared_ptr<const RegistrySnapshot> snapshot() const;
  // True once the first run has finished (whatever its outcome).
  bool firstRunDone() const { return first_run_done_.load(); }
  // Per seriesQuery: the last error, "" when the last call succeeded.
  std::map<std::string, std::string> lastErrors() const;
  // Per rule of the rule set in force, in order: what its last good relist found (nullptr
  // before one), as the snapshot was built from.
  std::vector<std::shared_ptr<const RuleFindings>> findings() const;

 private:
  std::shared_ptr<prometheus::PrometheusApi> prometheus_;
  RelistOptions options_;

  mutable std::mutex mutex_;  // guards the members below, never held during I/O
  std::shared_ptr<const RuleSet> rule_set_;
  std::shared_ptr<const RegistrySnapshot> snapshot_;
  std::vector<std::shared_ptr<const RuleFindings>> findings_;  // per rule, last good
  std::map<std::string, std::string> last_errors_;

  std::atomic<bool> first_run_done_{false};
  std::mutex loop_mutex_;
  std::condition_variable loop_wakeup_;
  bool stopping_ = false;
  bool relist_requested_ = false;
  std::thread loop_;
};

}  // namespace metrics_adapter::discovery
