#include "metrics_adapter/discovery/relister.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>

#include "discovery/findings_builder.h"
#include "metrics_adapter/telemetry/self_metrics.h"

namespace metrics_adapter::discovery {

std::chrono::milliseconds seriesDeadline(const RelistOptions& options) {
  return std::max(options.interval, options.min_series_deadline);
}

Relister::Relister(std::shared_ptr<const RuleSet> rule_set,
                   std::shared_ptr<prometheus::PrometheusApi> prometheus, RelistOptions options,
                   std::shared_ptr<telemetry::SelfMetrics> self_metrics)
    : prometheus_(std::move(prometheus)),
      options_(options),
      self_metrics_(self_metrics ? std::move(self_metrics)
                                 : std::make_shared<telemetry::SelfMetrics>()),
      rule_set_(std::move(rule_set)),
      snapshot_(std::make_shared<RegistrySnapshot>(rule_set_)),
      findings_(rule_set_->rules.size()) {}

Relister::~Relister() { stop(); }

void Relister::setRuleSet(std::shared_ptr<const RuleSet> rule_set) {
  {
    std::lock_guard lock(mutex_);
    std::map<std::pair<std::string, std::string>, std::shared_ptr<const RuleFindings>> previous;
    for (std::size_t i = 0; i < rule_set_->rules.size(); ++i) {
      const auto& rule = *rule_set_->rules[i];
      previous[{rule.id, rule.source.series_query}] = findings_[i];
    }
    rule_set_ = std::move(rule_set);
    findings_.assign(rule_set_->rules.size(), nullptr);
    for (std::size_t i = 0; i < rule_set_->rules.size(); ++i) {
      const auto& rule = *rule_set_->rules[i];
      auto it = previous.find({rule.id, rule.source.series_query});
      if (it != previous.end()) findings_[i] = it->second;
    }
    snapshot_ = std::make_shared<const RegistrySnapshot>(rule_set_, findings_);
  }
  {
    std::lock_guard lock(loop_mutex_);
    relist_requested_ = true;
  }
  loop_wakeup_.notify_all();
}

void Relister::relistOnce() {
  std::shared_ptr<const RuleSet> rule_set;
  {
    std::lock_guard lock(mutex_);
    rule_set = rule_set_;
  }
  const auto& rules = rule_set->rules;
  // Rules sharing a seriesQuery share one call.
  std::map<std::string, std::vector<std::size_t>> rules_by_query;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    rules_by_query[rules[i]->source.series_query].push_back(i);
  }
  const auto start = prometheus::Clock::now() - options_.max_age;
  const auto began = std::chrono::steady_clock::now();
  const auto deadline = seriesDeadline(options_);

  struct QueryOutcome {
    std::vector<std::pair<std::size_t, std::shared_ptr<const RuleFindings>>> findings;
    std::string error;
    std::string detail;  // the error with internal detail (the Prometheus URL), for the log
  };
  std::vector<std::pair<std::string, std::future<QueryOutcome>>> calls;
  calls.reserve(rules_by_query.size());
  for (const auto& [query, rule_indexes] : rules_by_query) {
    calls.emplace_back(
        query, std::async(std::launch::async,
                          [this, &rules, query = query, indexes = rule_indexes, start, deadline] {
                            QueryOutcome outcome;
                            std::vector<FindingsBuilder> builders;
                            builders.reserve(indexes.size());
                            for (std::size_t index : indexes) builders.emplace_back(*rules[index]);
                            try {
                              prometheus_->series(query, start, deadline,
                                                  [&](std::string_view name,
                                                      const std::vector<std::string_view>& labels) {
                                                    for (auto& builder : builders)
                                                      builder.add(name, labels);
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
                          }));
  }
  std::vector<std::pair<std::string, QueryOutcome>> outcomes;
  outcomes.reserve(calls.size());
  for (auto& [query, future] : calls) outcomes.emplace_back(query, future.get());

  auto& self_metrics = *self_metrics_;
  std::size_t failed = 0;
  std::lock_guard lock(mutex_);
  for (auto& [query, outcome] : outcomes) {
    last_errors_[query] = outcome.error;
    if (!outcome.error.empty()) {
      ++failed;
      spdlog::warn("relist: seriesQuery {} failed, keeping its last good result: {}", query,
                   outcome.detail);
      for (std::size_t index : rules_by_query[query]) self_metrics.countRuleError(rules[index]->id);
    }
  }
  self_metrics.observeRelist(std::chrono::steady_clock::now() - began, failed);
  if (rule_set != rule_set_) {
    spdlog::debug("relist: the rules changed during the run; its results are dropped");
    return;  // setRuleSet asked for another run
  }
  for (auto& [query, outcome] : outcomes) {
    for (auto& [index, found] : outcome.findings) {
      spdlog::debug("relist: {} saw {} series, {} metrics", rules[index]->id, found->series_seen,
                    found->metrics.size());
      if (found->series_dropped > 0) {
        spdlog::warn(
            "relist: {}: {} of {} series skipped: over {} distinct series names or {} label "
            "names; narrow its seriesQuery",
            rules[index]->id, found->series_dropped, found->series_seen,
            FindingsBuilder::kMaxSeriesNames, FindingsBuilder::kMaxLabelNames);
      }
      findings_[index] = std::move(found);
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
  spdlog::info("relist: {} series queries ({} failed) in {} ms; serving {} custom metrics",
               calls.size(), failed, elapsed.count(), snapshot_->customMetrics().size());
  first_run_done_ = true;
}

void Relister::start() {
  loop_ = std::thread([this] {
    std::unique_lock lock(loop_mutex_);
    while (!stopping_) {
      relist_requested_ = false;
      lock.unlock();
      // The schedule counts from each run's start, so a run that waited out its deadline on a
      // hung Prometheus does not push the next one a whole interval further back.
      const auto next_run = std::chrono::steady_clock::now() + options_.interval;
      try {
        relistOnce();
      } catch (const std::exception& e) {
        spdlog::error("relist failed: {}", e.what());
        first_run_done_ = true;
      }
      lock.lock();
      loop_wakeup_.wait_until(lock, next_run, [this] { return stopping_ || relist_requested_; });
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

std::map<std::string, std::string> Relister::lastErrors() const {
  std::lock_guard lock(mutex_);
  return last_errors_;
}

std::vector<std::shared_ptr<const RuleFindings>> Relister::findings() const {
  std::lock_guard lock(mutex_);
  return findings_;
}

}  // namespace metrics_adapter::discovery
