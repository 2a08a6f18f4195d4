#include "cli/explain/explain_resource.h"

#include <ostream>
#include <string>
#include <vector>

#include "metrics_adapter/promql/quantity.h"
#include "metrics_adapter/resource/resource_query.h"
#include "metrics_adapter/resource/usage.h"

namespace metrics_adapter::cli {
namespace {

// Runs `promql` as the server would and prints what came back; nullopt after printing a failure.
std::optional<prometheus::QueryResult> runResourceQuery(std::ostream& out, const char* what,
                                                        const std::string& promql,
                                                        prometheus::PrometheusApi& prometheus,
                                                        std::chrono::milliseconds timeout) {
  out << what << " query: " << promql << "\n";
  try {
    prometheus::QueryResult result = prometheus.query(promql, prometheus::Clock::now(), timeout);
    out << "  " << result.samples.size() << " samples";
    for (const auto& sample : result.samples) {
      out << "\n    {";
      bool first = true;
      for (const auto& [name, value] : sample.labels) {
        out << (first ? "" : ", ") << name << "=\"" << value << "\"";
        first = false;
      }
      out << "} " << sample.value;
    }
    out << "\n";
    return result;
  } catch (const prometheus::PrometheusError& e) {
    out << "  failed: " << e.what() << "\n";
    return std::nullopt;
  }
}

void printOmissions(std::ostream& out, const std::vector<resource::Omission>& omitted) {
  for (const auto& omission : omitted) {
    out << "left out: " << omission.detail
        << (omission.reason == resource::Omission::Reason::kBadValue
                ? " (a bad value is never served as 0)"
                : " (no sample for it)")
        << "\n";
  }
}

}  // namespace

int explainResourceMetrics(std::ostream& out, const ExplainOptions& options,
                           const discovery::CompiledResourceRules* rules,
                           const prometheus::Backend& backend) {
  prometheus::PrometheusApi& prometheus = *backend.api;
  if (!rules) {
    out << "answer: 404: the config has no resourceRules, so metrics.k8s.io is not served\n";
    return 2;
  }
  const bool nodes = options.resource == "nodes" || options.resource == "node";
  out << "backend: " << backend.name << " (" << backend.url << ")\n";
  out << "resourceRules: window " << (rules->window.empty() ? "0s" : rules->window)
      << ", containerLabel \"" << rules->cpu.source.container_label << "\"\n";
  const auto timeout = backend.queryTimeout(options.shared.query_timeout);
  try {
    if (nodes) {
      const std::vector<std::string> names = {options.name};
      auto cpu = runResourceQuery(out, "cpu", resource::renderNodeQuery(rules->cpu, names),
                                  prometheus, timeout);
      auto memory = runResourceQuery(out, "memory", resource::renderNodeQuery(rules->memory, names),
                                     prometheus, timeout);
      if (!cpu || !memory) {
        out << "answer: 503: the node query failed\n";
        return 2;
      }
      const resource::DecodedNodes decoded =
          resource::decodeNodeUsage(*rules, names, *cpu, *memory);
      printOmissions(out, decoded.omitted);
      if (decoded.nodes.empty()) {
        out << "answer: 404: nodemetrics.metrics.k8s.io \"" << options.name << "\" not found\n";
        return 2;
      }
      out << "answer: 200: cpu " << promql::formatNanoQuantity(decoded.nodes[0].cpu_nanocores)
          << ", memory " << promql::formatByteQuantity(decoded.nodes[0].memory_bytes) << "\n";
      return 0;
    }
    const std::vector<std::string> names = {options.name};
    auto cpu = runResourceQuery(out, "cpu",
                                resource::renderPodQuery(rules->cpu, options.namespace_name, names),
                                prometheus, timeout);
    auto memory = runResourceQuery(
        out, "memory", resource::renderPodQuery(rules->memory, options.namespace_name, names),
        prometheus, timeout);
    if (!cpu || !memory) {
      out << "answer: 503: the namespace's query failed\n";
      return 2;
    }
    const resource::DecodedPods decoded =
        resource::decodePodUsage(*rules, options.namespace_name, names, *cpu, *memory);
    printOmissions(out, decoded.omitted);
    if (decoded.pods.empty()) {
      out << "answer: 404: podmetrics.metrics.k8s.io \"" << options.namespace_name << "/"
          << options.name << "\" not found\n";
      return 2;
    }
    out << "answer: 200 (if the pod is Running):\n";
    for (const auto& container : decoded.pods[0].containers) {
      out << "  container \"" << container.name << "\": cpu "
          << promql::formatNanoQuantity(container.cpu_nanocores) << ", memory "
          << promql::formatByteQuantity(container.memory_bytes) << "\n";
    }
    return 0;
  } catch (const resource::ResourceQueryError& e) {
    out << "answer: 500: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace metrics_adapter::cli
