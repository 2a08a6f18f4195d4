#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/discovery/registry.h"
#include "metrics_adapter/prometheus/prometheus_api.h"

namespace metrics_adapter::telemetry {
class SelfMetrics;
}

namespace metrics_adapter::discovery {

// The shortest deadline a /api/v1/series call gets, however short the relist interval: below
// this a large but healthy answer (a 1M-series relist takes about 1.3 s of CPU) would fail.
inline constexpr std::chrono::milliseconds kMinSeriesDeadline{std::chrono::seconds(5)};

struct RelistOptions {
  std::chrono::milliseconds interval{std::chrono::minutes(1)};  // --metrics-relist-interval
  std::chrono::milliseconds max_age{std::chrono::minutes(2)};   // --metrics-max-age
  // The floor of seriesDeadline(); only tests lower it.
  std::chrono::milliseconds min_series_deadline = kMinSeriesDeadline;
  // Called on the relist thread after each backend's run in the loop, outside every lock (the
  // adapter gives the run's freed memory back to the OS there).
  std::function<void()> after_run;
};

// The deadline of each /api/v1/series call of a relist: the relist interval, but at least
// options.min_series_deadline (docs/reliability.md, "A hung Prometheus"). The Prometheus client
// caps it further by its own client timeout. A call still unanswered then is abandoned, so a
// Prometheus that accepts connections and never answers cannot hold discovery past it.
std::chrono::milliseconds seriesDeadline(const RelistOptions& options);

// Discovers metrics for every backend the rules name, each on its own schedule: one
// /api/v1/series call per distinct seriesQuery of that backend's rules, all in parallel, every
// interval, each with seriesDeadline(). A backend's runs start one interval after its previous
// run started (at once when that run took longer), so a hung or failing backend delays and fails
// only its own rules' discovery. A failing query keeps the last good findings of its rules; every
// run ends with a new immutable snapshot swapped in atomically. Relies on each backend honouring
// the timeout it is given. Thread-safe.
class Relister {
 public:
  // `self_metrics` records the relist and rule metrics; null records into a private instance.
  // The backends are those of `rule_set` (RuleSet::backends).
  Relister(std::shared_ptr<const RuleSet> rule_set, RelistOptions options,
           std::shared_ptr<telemetry::SelfMetrics> self_metrics = nullptr);
  ~Relister();  // stops the loop

  // Runs one relist of every backend now (in parallel) and returns when all have finished.
  void relistOnce();
  // Runs one relist of the rules that name `backend`, on the calling thread.
  void relistBackend(const std::string& backend);
  // Serves `rule_set` from now on and relists at once (in the loop when started). Findings of
  // rules that keep their id, backend and seriesQuery carry over until the relist replaces them.
  void setRuleSet(std::shared_ptr<const RuleSet> rule_set);
  // Starts the background loop (first run of every backend immediately).
  void start();
  void stop();

  std::shared_ptr<const RegistrySnapshot> snapshot() const;
  // True once the first run of every backend that the rules name and that is not `optional` has
  // finished (whatever its outcome); stays true after.
  bool firstRunDone() const { return first_run_done_.load(); }
  // Per (backend, seriesQuery): the last error, "" when the last call succeeded.
  std::map<std::pair<std::string, std::string>, std::string> lastErrors() const;
  // Per rule of the rule set in force, in order: what its last good relist found (nullptr
  // before one), as the snapshot was built from.
  std::vector<std::shared_ptr<const RuleFindings>> findings() const;

 private:
  struct Schedule;
  void updateFirstRunDone();  // with mutex_ held

  RelistOptions options_;
  std::shared_ptr<telemetry::SelfMetrics> self_metrics_;

  mutable std::mutex mutex_;  // guards the members below, never held during I/O
  std::shared_ptr<const RuleSet> rule_set_;
  std::shared_ptr<const RegistrySnapshot> snapshot_;
  std::vector<std::shared_ptr<const RuleFindings>> findings_;  // per rule, last good
  std::map<std::pair<std::string, std::string>, std::string> last_errors_;
  std::set<std::string> backends_done_;  // backends whose first run has finished

  std::atomic<bool> first_run_done_{false};
  std::mutex loop_mutex_;
  std::condition_variable loop_wakeup_;
  bool stopping_ = false;
  bool relist_requested_ = false;
  bool run_finished_ = false;
  std::thread loop_;
};

// The backend names `rule_set`'s rules use (custom and external rules), sorted.
std::vector<std::string> relistedBackends(const RuleSet& rule_set);

}  // namespace metrics_adapter::discovery
