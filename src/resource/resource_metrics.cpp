#include "metrics_adapter/resource/resource_metrics.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

namespace metrics_adapter::resource {
namespace {

// Runs task(0) .. task(count - 1) on at most `workers` threads: the calling thread and up to
// workers - 1 helpers, each taking the next index until none is left. Returns when all are
// done. `task` must not throw. If a helper cannot be started, fewer threads do the work.
void runBounded(std::size_t count, std::size_t workers,
                const std::function<void(std::size_t)>& task) {
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) task(i);
  };
  workers = std::clamp<std::size_t>(workers, 1, std::max<std::size_t>(count, 1));
  std::vector<std::jthread> helpers;
  helpers.reserve(workers - 1);
  for (std::size_t i = 1; i < workers; ++i) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error& e) {
      SPDLOG_WARN("resource metrics: could not start a query thread ({}); continuing with {}",
                  e.what(), helpers.size() + 1);
      break;
    }
  }
  work();
}  // the helpers join here

// What one query of the pods of a namespace (or of the nodes) came back with.
struct QueryOutcome {
  std::shared_ptr<const prometheus::QueryResult> result;  // set when there is no error
  std::optional<ResourceQueryError> error;
};

// Renders with `render`, then runs the query; every failure becomes a ResourceQueryError that
// names the rule's query and, once rendered, the PromQL.
template <typename Render, typename Run>
QueryOutcome attempt(const discovery::CompiledResourceRule& rule, std::string_view field,
                     Render render, Run run) {
  QueryOutcome outcome;
  std::string promql;
  try {
    promql = render();
    outcome.result = run(promql);
    if (outcome.result->type != prometheus::QueryResult::Type::kVector) {
      throw ResourceQueryError(std::string(field) + " of " + rule.id + " answered " +
                                   prometheus::describeResultType(outcome.result->type) +
                                   ", not an instant vector: " + promql,
                               promql, nullptr);
    }
  } catch (const ResourceQueryError& e) {
    outcome.error = e;
  } catch (const std::exception& e) {
    outcome.error = ResourceQueryError(
        std::string(field) + " of " + rule.id + " failed: " + e.what() + " (query: " + promql + ")",
        promql, std::current_exception());
  }
  return outcome;
}

const char* reasonLabel(Omission::Reason reason) {
  return reason == Omission::Reason::kBadValue ? "bad_value" : "no_data";
}

std::string objectName(const Omission& omission) {
  return omission.namespace_name.empty() ? omission.name
                                         : omission.namespace_name + "/" + omission.name;
}

}  // namespace

ResourceMetrics::ResourceMetrics(ResourceMetricsOptions options,
                                 std::shared_ptr<telemetry::SelfMetrics> self_metrics)
    : options_(options), self_metrics_(std::move(self_metrics)) {}

std::shared_ptr<const prometheus::QueryResult> ResourceMetrics::runQuery(
    const prometheus::Backend& backend, const std::string& promql,
    prometheus::Clock::time_point at) const {
  return backend.api->sharedQuery(promql, at, backend.queryTimeout(options_.query_timeout));
}

void ResourceMetrics::account(std::string_view resource,
                              const std::vector<Omission>& omitted) const {
  std::map<Omission::Reason, std::pair<std::size_t, const Omission*>> by_reason;
  for (const Omission& omission : omitted) {
    auto& [count, example] = by_reason[omission.reason];
    if (count++ == 0) example = &omission;
  }
  for (const auto& [reason, counted] : by_reason) {
    const auto& [count, example] = counted;
    if (self_metrics_) self_metrics_->countResourceOmissions(resource, reasonLabel(reason), count);
    // Bad values are a data problem worth a warning; missing data is usual for new objects.
    const auto level =
        reason == Omission::Reason::kBadValue ? spdlog::level::warn : spdlog::level::debug;
    spdlog::log(level, "resource metrics: {} {} left out ({}), e.g. {}: {}", count, resource,
                reason == Omission::Reason::kBadValue
                    ? "NaN, infinite, negative or too large values"
                    : "no samples",
                objectName(*example), example->detail);
  }
}

PodMetricsResult ResourceMetrics::podMetrics(const prometheus::Backend& backend,
                                             const discovery::CompiledResourceRules& rules,
                                             const std::vector<PodRef>& pods,
                                             prometheus::Clock::time_point at) const {
  std::map<std::string, std::vector<std::string>> names_by_namespace;
  for (const PodRef& pod : pods) names_by_namespace[pod.namespace_name].push_back(pod.name);
  std::vector<std::pair<const std::string*, const std::vector<std::string>*>> namespaces;
  namespaces.reserve(names_by_namespace.size());
  for (const auto& [name, pod_names] : names_by_namespace)
    namespaces.emplace_back(&name, &pod_names);

  // Task 2i is namespace i's CPU query, 2i + 1 its memory query. Whichever of the two ends last
  // decodes the namespace and drops both answers, so that at most a few answers (with all their
  // label maps) are held at once, not every namespace's.
  std::vector<QueryOutcome> outcomes(2 * namespaces.size());
  std::vector<DecodedPods> decoded(namespaces.size());
  std::vector<std::optional<NamespaceFailure>> failed(namespaces.size());
  std::unique_ptr<std::atomic<int>[]> finished(new std::atomic<int>[namespaces.size()]);
  for (std::size_t i = 0; i < namespaces.size(); ++i) finished[i] = 0;
  runBounded(outcomes.size(), options_.max_concurrent_queries, [&](std::size_t task) {
    const std::size_t index = task / 2;
    const std::string& namespace_name = *namespaces[index].first;
    const std::vector<std::string>& pod_names = *namespaces[index].second;
    const discovery::CompiledResourceRule& rule = task % 2 == 0 ? rules.cpu : rules.memory;
    outcomes[task] = attempt(
        rule, "containerQuery", [&] { return renderPodQuery(rule, namespace_name, pod_names); },
        [&](const std::string& promql) { return runQuery(backend, promql, at); });
    if (finished[index].fetch_add(1) != 1) return;  // the other query is still running
    QueryOutcome& cpu = outcomes[2 * index];
    QueryOutcome& memory = outcomes[2 * index + 1];
    if (cpu.error || memory.error) {
      failed[index] = NamespaceFailure{namespace_name, cpu.error ? *cpu.error : *memory.error};
    } else {
      decoded[index] =
          decodePodUsage(rules, namespace_name, pod_names, *cpu.result, *memory.result);
    }
    cpu = QueryOutcome{};
    memory = QueryOutcome{};
  });

  PodMetricsResult result;
  std::map<std::string, std::map<std::string, PodUsage>, std::less<>> usage;
  for (std::size_t i = 0; i < namespaces.size(); ++i) {
    if (failed[i]) {
      result.failures.push_back(std::move(*failed[i]));
      continue;
    }
    auto& in_namespace = usage[*namespaces[i].first];
    for (PodUsage& pod : decoded[i].pods) {
      std::string name = pod.name;
      in_namespace.emplace(std::move(name), std::move(pod));
    }
    std::move(decoded[i].omitted.begin(), decoded[i].omitted.end(),
              std::back_inserter(result.omitted));
  }
  // In the order asked; a pod listed twice is served once (the first extract empties its slot).
  for (const PodRef& pod : pods) {
    const auto in_namespace = usage.find(pod.namespace_name);
    if (in_namespace == usage.end()) continue;
    auto node = in_namespace->second.extract(pod.name);
    if (!node.empty()) result.pods.push_back(std::move(node.mapped()));
  }
  account("pods", result.omitted);
  return result;
}

NodeMetricsResult ResourceMetrics::nodeMetrics(const prometheus::Backend& backend,
                                               const discovery::CompiledResourceRules& rules,
                                               const std::vector<std::string>& nodes,
                                               prometheus::Clock::time_point at) const {
  NodeMetricsResult result;
  if (nodes.empty()) return result;
  std::vector<QueryOutcome> outcomes(2);
  runBounded(2, std::min<std::size_t>(2, options_.max_concurrent_queries), [&](std::size_t task) {
    const discovery::CompiledResourceRule& rule = task == 0 ? rules.cpu : rules.memory;
    outcomes[task] = attempt(
        rule, "nodeQuery", [&] { return renderNodeQuery(rule, nodes); },
        [&](const std::string& promql) { return runQuery(backend, promql, at); });
  });
  for (const QueryOutcome& outcome : outcomes) {
    if (outcome.error) throw *outcome.error;
  }
  DecodedNodes decoded = decodeNodeUsage(rules, nodes, *outcomes[0].result, *outcomes[1].result);
  std::map<std::string, NodeUsage, std::less<>> by_name;
  for (NodeUsage& node : decoded.nodes) {
    std::string name = node.name;
    by_name.emplace(std::move(name), std::move(node));
  }
  for (const std::string& name : nodes) {
    auto node = by_name.extract(name);
    if (!node.empty()) result.nodes.push_back(std::move(node.mapped()));
  }
  result.omitted = std::move(decoded.omitted);
  account("nodes", result.omitted);
  return result;
}

}  // namespace metrics_adapter::resource
