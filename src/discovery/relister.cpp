#include "metrics_adapter/discovery/relister.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <set>
#include <tuple>

#include "discovery/findings_builder.h"
#include "metrics_adapter/discovery/known_metrics.h"
#include "metrics_adapter/telemetry/self_metrics.h"

namespace metrics_adapter::discovery {

std::chrono::milliseconds seriesDeadline(const RelistOptions& options) {
  return std::max(options.interval, options.min_series_deadline);
}

std::vector<std::string> relistedBackends(const RuleSet& rule_set) {
  std::set<std::string> names;
  for (const auto& rule : rule_set.rules) names.insert(rule->source.backend);
  return {names.begin(), names.end()};
}

Relister::Relister(std::shared_ptr<const RuleSet> rule_set, RelistOptions options,
                   std::shared_ptr<telemetry::SelfMetrics> self_metrics)
    : options_(std::move(options)),
      self_metrics_(self_metrics ? std::move(self_metrics)
                                 : std::make_shared<telemetry::SelfMetrics>()),
      rule_set_(std::move(rule_set)),
      snapshot_(std::make_shared<RegistrySnapshot>(rule_set_)),
      findings_(rule_set_->rules.size()) {
  updateFirstRunDone();
}

Relister::~Relister() { stop(); }

void Relister::setRuleSet(std::shared_ptr<const RuleSet> rule_set) {
  {
    std::lock_guard lock(mutex_);
    using Key = std::tuple<std::string, std::string, std::string>;  // id, backend, seriesQuery
    auto key = [](const CompiledRule& rule) {
      return Key{rule.id, rule.source.backend, rule.source.series_query};
    };
    std::map<Key, std::shared_ptr<const RuleFindings>> previous;
    for (std::size_t i = 0; i < rule_set_->rules.size(); ++i) {
      previous[key(*rule_set_->rules[i])] = findings_[i];
    }
    rule_set_ = std::move(rule_set);
    findings_.assign(rule_set_->rules.size(), nullptr);
    for (std::size_t i = 0; i < rule_set_->rules.size(); ++i) {
      auto it = previous.find(key(*rule_set_->rules[i]));
      if (it != previous.end()) findings_[i] = it->second;
    }
    snapshot_ = std::make_shared<const RegistrySnapshot>(rule_set_, findings_);
    updateFirstRunDone();
  }
  {
    std::lock_guard lock(loop_mutex_);
    relist_requested_ = true;
  }
  loop_wakeup_.notify_all();
}

void Relister::updateFirstRunDone() {
  if (first_run_done_) return;
  for (const std::string& name : relistedBackends(*rule_set_)) {
    const prometheus::Backend* backend =
        rule_set_->backends ? rule_set_->backends->find(name) : nullptr;
    if (backend && backend->optional) continue;
    if (!backends_done_.count(name)) return;
  }
  first_run_done_ = true;
}

void Relister::relistOnce() {
  std::shared_ptr<const RuleSet> rule_set;
  {
    std::lock_guard lock(mutex_);
    rule_set = rule_set_;
  }
  std::vector<std::future<void>> runs;
  for (const std::string& name : relistedBackends(*rule_set)) {
    runs.push_back(std::async(std::launch::async, [this, name] { relistBackend(name); }));
  }
  for (auto& run : runs) run.get();
}

void Relister::relistBackend(const std::string& backend_name) {
  std::shared_ptr<const RuleSet> rule_set;
  {
    std::lock_guard lock(mutex_);
    rule_set = rule_set_;
  }
  const auto& rules = rule_set->rules;
  const prometheus::Backend* backend =
      rule_set->backends ? rule_set->backends->find(backend_name) : nullptr;
  // This backend's rules; those sharing a seriesQuery share one call.
  std::map<std::string, std::vector<std::size_t>> rules_by_query;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    if (rules[i]->source.backend == backend_name) {
      rules_by_query[rules[i]->source.series_query].push_back(i);
    }
  }
  const auto start = prometheus::Clock::now() - options_.max_age;
  const auto began = std::chrono::steady_clock::now();
  const auto deadline = seriesDeadline(options_);

  struct QueryOutcome {
    std::vector<std::pair<std::size_t, std::shared_ptr<const RuleFindings>>> findings;
    std::string error;
    std::string detail;  // the error with internal detail (the Prometheus URL), for the log
  };
  auto discover = [&rules, backend, backend_name, start, deadline](
                      const std::string& query, const std::vector<std::size_t>& indexes) {
    QueryOutcome outcome;
    if (!backend) {
      outcome.error = outcome.detail = "backend \"" + backend_name + "\" is not configured";
      return outcome;
    }
    std::vector<FindingsBuilder> builders;
    builders.reserve(indexes.size());
    for (std::size_t index : indexes) builders.emplace_back(*rules[index]);
    try {
      backend->api->series(query, start, deadline,
                           [&](std::string_view name, const std::vector<std::string_view>& labels) {
                             for (auto& builder : builders) builder.add(name, labels);
                           });
      for (std::size_t i = 0; i < indexes.size(); ++i) {
        outcome.findings.emplace_back(indexes[i], builders[i].finish());
      }
    } catch (const prometheus::PrometheusError& e) {
      outcome.error = e.what();
      outcome.detail = e.detail();
    } catch (const std::exception& e) {
      outcome.error = e.what();
      outcome.detail = outcome.error;
    }
    return outcome;
  };
  std::vector<std::pair<std::string, std::future<QueryOutcome>>> calls;
  calls.reserve(rules_by_query.size());
  for (const auto& [query, rule_indexes] : rules_by_query) {
    calls.emplace_back(query, std::async(std::launch::async, discover, query, rule_indexes));
  }
  std::vector<std::pair<std::string, QueryOutcome>> outcomes;
  outcomes.reserve(calls.size());
  for (auto& [query, future] : calls) outcomes.emplace_back(query, future.get());

  auto& self_metrics = *self_metrics_;
  std::size_t failed = 0;
  std::lock_guard lock(mutex_);
  for (auto& [query, outcome] : outcomes) {
    last_errors_[{backend_name, query}] = outcome.error;
    if (!outcome.error.empty()) {
      ++failed;
      SPDLOG_WARN("relist: backend {}: seriesQuery {} failed, keeping its last good result: {}",
                  backend_name, query, outcome.detail);
      for (std::size_t index : rules_by_query[query]) self_metrics.countRuleError(rules[index]->id);
    }
  }
  self_metrics.observeRelist(backend_name, std::chrono::steady_clock::now() - began, failed);
  if (failed == 0)
    self_metrics.setBackendRelistSuccess(backend_name, std::chrono::system_clock::now());
  backends_done_.insert(backend_name);
  updateFirstRunDone();
  if (rule_set != rule_set_) {
    SPDLOG_DEBUG("relist: the rules changed during the run; its results are dropped");
    return;  // setRuleSet asked for another run
  }
  for (auto& [query, outcome] : outcomes) {
    for (auto& [index, found] : outcome.findings) {
      SPDLOG_DEBUG("relist: {} saw {} series, {} metrics", rules[index]->id, found->series_seen,
                   found->metrics.size());
      if (found->series_dropped > 0) {
        SPDLOG_WARN(
            "relist: {}: {} of {} series skipped: over {} distinct series names or {} label "
            "names; narrow its seriesQuery",
            rules[index]->id, found->series_dropped, found->series_seen,
            FindingsBuilder::kMaxSeriesNames, FindingsBuilder::kMaxLabelNames);
      }
      findings_[index] = keepGoneMetrics(*rules[index], findings_[index], std::move(found));
    }
  }
  snapshot_ = std::make_shared<const RegistrySnapshot>(rule_set_, findings_);
  std::vector<std::string> rule_ids;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    rule_ids.push_back(rules[i]->id);
    if (findings_[i]) {
      self_metrics.setRuleDiscovery(rules[i]->id, findings_[i]->series_seen,
                                    findings_[i]->metrics.size());
    }
  }
  self_metrics.keepRules(rule_ids);
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - began);
  SPDLOG_INFO(
      "relist: backend {}: {} series queries ({} failed) in {} ms; serving {} custom metrics",
      backend_name, calls.size(), failed, elapsed.count(), snapshot_->customMetrics().size());
}

// One backend's place in the loop: when its next run is due, and the run in progress.
struct Relister::Schedule {
  std::chrono::steady_clock::time_point next_run;
  std::future<void> running;
};

void Relister::start() {
  loop_ = std::thread([this] {
    std::map<std::string, Schedule> schedules;
    std::unique_lock lock(loop_mutex_);
    while (!stopping_) {
      const auto now = std::chrono::steady_clock::now();
      if (relist_requested_) {
        for (auto& [name, schedule] : schedules) schedule.next_run = now;
        relist_requested_ = false;
      }
      run_finished_ = false;
      std::shared_ptr<const RuleSet> rule_set = [this] {
        std::lock_guard rules_lock(mutex_);
        return rule_set_;
      }();
      auto next_wake = now + options_.interval;
      for (const std::string& name : relistedBackends(*rule_set)) {
        Schedule& schedule = schedules.try_emplace(name, Schedule{now, {}}).first->second;
        if (schedule.running.valid() &&
            schedule.running.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
          schedule.running.get();
        }
        if (schedule.running.valid()) continue;  // its end wakes the loop
        if (schedule.next_run <= now) {
          // The schedule counts from each run's start, so a run that waited out its deadline on
          // a hung backend does not push the next one a whole interval further back.
          schedule.next_run = now + options_.interval;
          schedule.running = std::async(std::launch::async, [this, name] {
            try {
              relistBackend(name);
              if (options_.after_run) options_.after_run();
            } catch (const std::exception& e) {
              SPDLOG_ERROR("relist of backend {} failed: {}", name, e.what());
            }
            std::lock_guard finished_lock(loop_mutex_);
            run_finished_ = true;
            loop_wakeup_.notify_all();
          });
          continue;
        }
        next_wake = std::min(next_wake, schedule.next_run);
      }
      loop_wakeup_.wait_until(lock, next_wake,
                              [this] { return stopping_ || relist_requested_ || run_finished_; });
    }
    lock.unlock();
    for (auto& [name, schedule] : schedules) {
      if (schedule.running.valid()) schedule.running.get();
    }
  });
}

void Relister::stop() {
  {
    std::lock_guard lock(loop_mutex_);
    stopping_ = true;
  }
  loop_wakeup_.notify_all();
  if (loop_.joinable()) loop_.join();
}

std::shared_ptr<const RegistrySnapshot> Relister::snapshot() const {
  std::lock_guard lock(mutex_);
  return snapshot_;
}

std::map<std::pair<std::string, std::string>, std::string> Relister::lastErrors() const {
  std::lock_guard lock(mutex_);
  return last_errors_;
}

std::vector<std::shared_ptr<const RuleFindings>> Relister::findings() const {
  std::lock_guard lock(mutex_);
  return findings_;
}

}  // namespace metrics_adapter::discovery
